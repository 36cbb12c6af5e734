"""--view: a live prismarine-viewer page of the Minecraft world, loaded in headless Chromium.

The screenshot must show the world, not an empty page: the superflat grass under the bots
(green) below the sky (light blue).
"""

from __future__ import annotations

import shutil
import socket
import subprocess
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from gencoord.cli.options import world_choice
from gencoord.errors import ConfigError
from gencoord.eval.config import find_experiment, load_experiment
from gencoord.eval.experiment import config_digest
from gencoord.prior import Prior
from gencoord.worlds.conformance_fixtures import conformance_world
from gencoord.worlds.mineflayer import MinecraftExecutor, ServerOptions
from gencoord.worlds.mineflayer.bridge import JS_DIR

SCREENSHOT = Path(__file__).parent / "browser" / "screenshot.js"


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_view_needs_minecraft_and_leaves_the_digest_alone() -> None:
    with pytest.raises(ConfigError) as caught:
        world_choice("sim", None, 25565, "1.21.4", "0,0,0", view=True)
    assert caught.value.reason == "VIEW_WITHOUT_MINECRAFT"
    watched = world_choice("minecraft", None, 25565, "1.21.4", "0,0,0", view=True, view_port=4000)
    plain = world_choice("minecraft", None, 25565, "1.21.4", "0,0,0")
    assert watched is not None and plain is not None
    assert watched.view_port == 4000 and plain.view_port is None and watched.one_worker
    config = load_experiment(find_experiment("team_tasks"))
    with_view, without = (config.model_copy(update={"world": world}) for world in (watched, plain))
    assert config_digest(with_view) == config_digest(without)  # watching changes no record


@pytest.mark.minecraft
@pytest.mark.skipif(shutil.which("chromium") is None, reason="chromium is not installed (make test installs it)")
def test_the_view_shows_the_world_in_a_browser(prior: Prior, tmp_path: Path) -> None:
    port = _free_port()
    executor = MinecraftExecutor(ServerOptions(view_port=port), game=prior.game)
    try:
        executor.reset(conformance_world(prior))
        assert executor.view_url == f"http://127.0.0.1:{port}"
        shot = tmp_path / "view.png"
        for wait_ms in ("12000", "24000", "36000"):  # a loaded machine renders slower: look again, longer
            subprocess.run(
                ["node", str(SCREENSHOT), executor.view_url, str(shot), wait_ms, str(JS_DIR / "node_modules")],
                check=True,
                timeout=120,
            )
            pixels = np.asarray(Image.open(shot).convert("RGB")).astype(int)
            red, green, blue = pixels[..., 0], pixels[..., 1], pixels[..., 2]
            grass = (green > red + 20) & (green > blue + 20)
            sky = (blue > red + 20) & (blue > 150)
            if grass.mean() > 0.2:
                break
    finally:
        executor.close()
    assert grass.mean() > 0.2, f"only {grass.mean():.0%} of the view is grass: the world did not render"
    assert sky.mean() > 0.05, f"only {sky.mean():.0%} of the view is sky"
