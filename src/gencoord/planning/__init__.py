"""Planning over the shared prior's recipe data: whether a team's goal is reachable, and how."""
