'use strict'
// The server's recipe lookup, against minecraft-data's own recipes.
const test = require('node:test')
const assert = require('node:assert')
const registry = require('prismarine-registry')('1.21.4')
const { matchRecipe } = require('../recipes')

const id = (name) => registry.itemsByName[name].id
const P = id('oak_planks')
const S = id('stick')
const C = id('cobblestone')

test('a 2x2 of planks is a crafting table wherever it sits in a 3x3 grid', () => {
  const grid = [[null, null, null], [null, P, P], [null, P, P]]
  assert.deepStrictEqual(matchRecipe(registry, grid), { id: id('crafting_table'), count: 1 })
  assert.deepStrictEqual(matchRecipe(registry, [[P, P], [P, P]]), { id: id('crafting_table'), count: 1 })
})

test('two planks stacked make four sticks; side by side, a pressure plate', () => {
  assert.deepStrictEqual(matchRecipe(registry, [[P, null], [P, null]]), { id: S, count: 4 })
  assert.deepStrictEqual(matchRecipe(registry, [[P, P], [null, null]]), { id: id('oak_pressure_plate'), count: 1 })
})

test('shaped recipes also match mirrored: a stone axe faces either way', () => {
  const axe = { id: id('stone_axe'), count: 1 }
  assert.deepStrictEqual(matchRecipe(registry, [[C, C, null], [C, S, null], [null, S, null]]), axe)
  assert.deepStrictEqual(matchRecipe(registry, [[null, C, C], [null, S, C], [null, S, null]]), axe)
})

test('a chest is a ring of eight planks, and an empty or odd grid is nothing', () => {
  assert.deepStrictEqual(matchRecipe(registry, [[P, P, P], [P, null, P], [P, P, P]]), { id: id('chest'), count: 1 })
  assert.strictEqual(matchRecipe(registry, [[null, null], [null, null]]), null)
  assert.strictEqual(matchRecipe(registry, [[C, null], [null, S]]), null)
})

test('shapeless recipes match in any slot order', () => {
  const log = id('oak_log')
  assert.deepStrictEqual(matchRecipe(registry, [[null, null], [null, log]]), { id: P, count: 4 })
})
