'use strict'
// Which recipe a crafting grid holds, from minecraft-data's recipe table.
//
// Servers must decide this on their own (the client's word is not ground truth), and
// flying-squid does not; this is the lookup vanilla does: shaped recipes match the
// grid's trimmed bounding box, as given or mirrored; shapeless ones match the multiset.

function ingredientId (entry) {
  if (entry === null || entry === undefined) return null
  if (typeof entry === 'number') return entry < 0 ? null : entry
  if (Array.isArray(entry)) return entry.map(ingredientId)
  return entry.id === undefined || entry.id < 0 ? null : entry.id
}

function accepts (want, have) {
  if (Array.isArray(want)) return want.includes(have)
  return want === have
}

function trim (rows) {
  const filled = (cell) => cell !== null
  let top = 0
  let bottom = rows.length - 1
  while (top <= bottom && !rows[top].some(filled)) top++
  while (bottom >= top && !rows[bottom].some(filled)) bottom--
  if (top > bottom) return []
  const kept = rows.slice(top, bottom + 1)
  const width = kept[0].length
  let left = 0
  let right = width - 1
  while (left <= right && kept.every((row) => row[left] === null)) left++
  while (right >= left && kept.every((row) => row[right] === null)) right--
  return kept.map((row) => row.slice(left, right + 1))
}

function shapeMatches (shape, grid) {
  if (shape.length !== grid.length || shape[0].length !== grid[0].length) return false
  return shape.every((row, y) => row.every((want, x) => {
    const have = grid[y][x]
    if (want === null) return have === null
    return have !== null && accepts(want, have)
  }))
}

function shapelessMatches (ingredients, items) {
  if (ingredients.length !== items.length) return false
  const left = [...items]
  for (const want of ingredients) {
    const at = left.findIndex((have) => accepts(want, have))
    if (at < 0) return false
    left.splice(at, 1)
  }
  return true
}

// grid: rows of item ids (null for empty), width 2 or 3. Returns {id, count} or null.
function matchRecipe (registry, grid) {
  const rows = trim(grid)
  if (rows.length === 0) return null
  const items = rows.flat().filter((cell) => cell !== null)
  for (const [resultId, recipes] of Object.entries(registry.recipes)) {
    for (const recipe of recipes) {
      if (!recipe.result || !recipe.result.count) continue
      if (recipe.inShape) {
        const shape = trim(recipe.inShape.map((row) => row.map(ingredientId)))
        const mirrored = shape.map((row) => [...row].reverse())
        if (shapeMatches(shape, rows) || shapeMatches(mirrored, rows)) {
          return { id: recipe.result.id ?? Number(resultId), count: recipe.result.count ?? 1 }
        }
      } else if (recipe.ingredients) {
        if (shapelessMatches(recipe.ingredients.map(ingredientId), items)) {
          return { id: recipe.result.id ?? Number(resultId), count: recipe.result.count ?? 1 }
        }
      }
    }
  }
  return null
}

// Shapeless variants the caller's recipe table has beyond minecraft-data's (dyeing takes any
// wool of another colour, a tag minecraft-data collapsed to one member), added to a registry's
// recipe list once: [{ result, count, ingredients: { name: n } }]. The server matches grids
// against them and the bots' prismarine-recipe finds them, so both sides craft the same table.
function addRecipes (registry, variants) {
  const added = registry.gencoordAdded ?? (registry.gencoordAdded = new Set())
  for (const { result, count, ingredients } of variants) {
    const key = `${result}:${Object.entries(ingredients).sort().map(([name, n]) => `${name}*${n}`).join(',')}`
    if (added.has(key)) continue
    const item = registry.itemsByName[result]
    const ids = Object.entries(ingredients).flatMap(([name, n]) => Array(n).fill(registry.itemsByName[name]?.id))
    if (!item || ids.some((id) => id === undefined)) continue
    const list = registry.recipes[item.id] ?? (registry.recipes[item.id] = [])
    list.push({ ingredients: ids, result: { id: item.id, count } })
    added.add(key)
  }
}

module.exports = { matchRecipe, addRecipes }
