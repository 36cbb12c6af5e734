"""Extract the item, recipe and block-mining subset of minecraft-data that gencoord needs.

Why a script: the executable prior must use real Minecraft item names and recipes
(so a plan that is legal here is legal on a real server), but minecraft-data is a
500 MB npm package. We keep this script in the repository, run it by hand when the
pinned version changes, and commit its small output with the upstream licence notice.

Usage: python scripts/extract_minecraft_data.py [--version 3.119.0] [--game 1.21.4]
Needs `npm` on PATH (it only runs `npm pack`, nothing is installed).
"""

from __future__ import annotations

import argparse
import io
import json
import subprocess
import tarfile
import tempfile
from pathlib import Path
from typing import Any

OUT_DIR = Path(__file__).resolve().parents[1] / "src" / "gencoord" / "prior" / "data"


def _member(archive: tarfile.TarFile, name: str) -> Any:
    handle = archive.extractfile(f"package/minecraft-data/data/{name}")
    if handle is None:
        raise SystemExit(f"minecraft-data archive has no file {name}")
    return json.load(io.TextIOWrapper(handle, encoding="utf-8"))


def _grid_size(recipe: dict[str, Any]) -> tuple[int, int]:
    shape = recipe.get("inShape")
    if shape is None:  # shapeless: the smallest square grid that holds the ingredients
        return (2, 2) if len(recipe["ingredients"]) <= 4 else (3, 3)
    return (len(shape), max(len(row) for row in shape))


def _ingredients(recipe: dict[str, Any], names: dict[int, str]) -> dict[str, int]:
    cells = [cell for row in recipe["inShape"] for cell in row] if "inShape" in recipe else list(recipe["ingredients"])
    counts: dict[str, int] = {}
    for cell in cells:
        if cell is None:
            continue
        item_id = cell if isinstance(cell, int) else cell["id"]
        counts[names[item_id]] = counts.get(names[item_id], 0) + 1
    return dict(sorted(counts.items()))


def _blocks(blocks: list[dict[str, Any]], names: dict[int, str]) -> dict[str, dict[str, Any]]:
    """Mining data of every breakable block: hardness, tool material, harvest tools, drops."""
    table: dict[str, dict[str, Any]] = {}
    for block in blocks:
        if not block.get("diggable") or block.get("hardness") is None or block["hardness"] < 0:
            continue
        tools = block.get("harvestTools")
        table[block["name"]] = {
            "hardness": block["hardness"],
            "material": block.get("material", "default"),
            "harvest_tools": None if tools is None else sorted(names[int(tool)] for tool in tools),
            "drops": [names[item_id] for item_id in block.get("drops", []) if item_id in names],
        }
    return dict(sorted(table.items()))


def extract(package_version: str, game_version: str) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run(
            ["npm", "pack", f"minecraft-data@{package_version}", "--silent"],
            cwd=tmp,
            check=True,
            stdout=subprocess.DEVNULL,
        )
        tarball = next(Path(tmp).glob("minecraft-data-*.tgz"))
        with tarfile.open(tarball) as archive:
            paths = _member(archive, "dataPaths.json")["pc"][game_version]
            items = _member(archive, f"{paths['items']}/items.json")
            recipes = _member(archive, f"{paths['recipes']}/recipes.json")
            blocks = _member(archive, f"{paths['blocks']}/blocks.json")
            materials = _member(archive, f"{paths['materials']}/materials.json")
    names = {item["id"]: item["name"] for item in items}
    table: dict[str, list[dict[str, Any]]] = {}
    for result_id, variants in recipes.items():
        for recipe in variants:
            rows, cols = _grid_size(recipe)
            entry = {
                "count": recipe["result"]["count"],
                "grid": max(rows, cols),
                "ingredients": _ingredients(recipe, names),
            }
            table.setdefault(names[int(result_id)], []).append(entry)
    return {
        "game_version": game_version,
        "source": f"minecraft-data {package_version} (PrismarineJS), data/pc/{game_version}",
        "items": {item["name"]: item["stackSize"] for item in items if item["name"] != "air"},
        "recipes": dict(sorted(table.items())),
        "blocks": _blocks(blocks, names),
        "tool_speeds": {
            material: {names[int(tool)]: speed for tool, speed in sorted(tools.items())}
            for material, tools in sorted(materials.items())
            if tools
        },
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--version", default="3.119.0", help="minecraft-data npm version")
    parser.add_argument("--game", default="1.21.4", help="Minecraft Java version")
    args = parser.parse_args()
    data = extract(args.version, args.game)
    out = OUT_DIR / f"minecraft_{args.game.replace('.', '_')}.json"
    out.write_text(json.dumps(data, separators=(",", ":"), sort_keys=False) + "\n")
    print(
        f"wrote {out} ({len(data['items'])} items, {len(data['recipes'])} craftable results, "
        f"{len(data['blocks'])} breakable blocks)"
    )


if __name__ == "__main__":
    main()
