'use strict'
// A flying-squid plugin that gives the server the survival mechanics our episodes use.
//
// Stock flying-squid 1.12 walks, digs and places on 1.21.4, but items handed over vanish,
// chests hold nothing, nothing crafts, and window clicks are never checked. Everything
// here is done the way vanilla does it, from minecraft-data, so a plan that works on this
// server works on a real one: the client (Mineflayer) code never depends on this file.
// The one extra is `serv.gencoord.dump()`, the server's own view of inventories and
// containers, which the verifier compares with what the bots saw.

const { Vec3 } = require('vec3')
const { matchRecipe, addRecipes } = require('./recipes')

const TOSS_PICKUP_MS = 2000 // vanilla: a player-thrown stack waits 40 ticks
const DROP_PICKUP_MS = 500 // vanilla: a mined block's drop waits 10 ticks
const PICKUP_REACH = 1.5 // player box grown by one block, as vanilla's pickup check
// A mined block's drop goes to the player who mined it for this long, and a thrown stack to
// the player it is handed to (the bridge says whom, just before the throw; else the player the
// thrower faces), then to anyone: two agents mining side by side never collect each other's
// drops, and a hand-over into a crowd reaches the agent it was thrown to. (Vanilla has no
// such rule; there whoever stands nearest wins the race, which no plan can account for.)
const OWNER_KEEPS_MS = 6000
const THROWN_KEEPS_MS = 30000 // a receiver busy elsewhere comes back for its stack: the hand-over waits that long
const THROWN_TO_CONE = 0.35 // radians either side of the thrower's heading: the player it faces
const THROWN_TO_RANGE = 6 // blocks: a hand-over is thrown from within reach
const HANDED_TO_MS = 5000 // a declared receiver holds for the giver's next throw within this long
const CHEST_SLOTS = 27
const MAX_FILL = 32768 // vanilla /fill limit
const MAX_FALL = 64 // blocks a drop falls at most before it rests
const MIN_Y = -64 // the bottom of the 1.21 overworld

const key = (p) => `${Math.floor(p.x)},${Math.floor(p.y)},${Math.floor(p.z)}`

module.exports.server = function (serv) {
  const registry = serv.registry
  const Item = require('prismarine-item')(registry)
  const windows = require('prismarine-windows')(registry)
  const modernMetadata = registry.version['>=']('1.20.2')
  const newTeleport = registry.version['>=']('1.21.2')
  const itemEntityType = registry.entitiesByName.item.id
  const containers = new Map() // "x,y,z" → Array(27) of Item|null
  const itemEntities = new Map() // entity id → our item entities
  let nextWindowId = 1
  let stateId = 1

  const clone = (item, slot) => {
    if (!item || item.count <= 0) return null
    const copy = new Item(item.type, item.count, item.metadata, item.nbt)
    copy.slot = slot
    return copy
  }

  const countItems = (slots) => {
    const counts = {}
    for (const item of slots) {
      if (item && item.count > 0) counts[item.name] = (counts[item.name] ?? 0) + item.count
    }
    return counts
  }

  // ---------------------------------------------------------------- packets
  // flying-squid writes some packets in pre-1.21.2 shapes; on newer clients those kill
  // the connection of everyone who receives them. Complete them on the way out.
  const byteToDegrees = (b) => (b ?? 0) * 360 / 256
  function patchWrites (client) {
    const write = client.write.bind(client)
    client.write = (name, params) => {
      if (newTeleport && name === 'entity_teleport' && params.dx === undefined) {
        params = { ...params, dx: 0, dy: 0, dz: 0, yaw: byteToDegrees(params.yaw), pitch: byteToDegrees(params.pitch), flags: 0 }
      } else if (newTeleport && name === 'position' && params.dx === undefined) {
        params = { ...params, dx: 0, dy: 0, dz: 0, flags: 0 }
      }
      return write(name, params)
    }
  }

  // ---------------------------------------------------------------- inventory
  // Put count items into the main inventory (hotbar first, like vanilla's pickup).
  // Returns how many fitted.
  function giveItems (player, type, count) {
    const inv = player.inventory
    const stackSize = registry.items[type].stackSize
    const order = [...Array(9).keys()].map((i) => 36 + i).concat([...Array(27).keys()].map((i) => 9 + i))
    let left = count
    const filled = []
    for (const slot of order) {
      const item = inv.slots[slot]
      if (left > 0 && item && item.type === type && item.count < stackSize) {
        const add = Math.min(left, stackSize - item.count)
        inv.updateSlot(slot, clone({ ...item, count: item.count + add, type: item.type }, slot))
        left -= add
        filled.push([slot, add])
      }
    }
    for (const slot of order) {
      if (left > 0 && !inv.slots[slot]) {
        const add = Math.min(left, stackSize)
        inv.updateSlot(slot, new Item(type, add))
        left -= add
        filled.push([slot, add])
      }
    }
    mirrorInOpenWindow(player, type, filled)
    return count - left
  }

  // As in vanilla, what a player picks up with a chest or furnace open shows in that window's
  // inventory part too; else closing the window would write the older inventory back over it.
  function mirrorInOpenWindow (player, type, filled) {
    const view = player.gcWindow
    if (!view || view.id === 0 || filled.length === 0) return
    const { window } = view
    for (const [slot, add] of filled) {
      // only what was picked up is added: a click still pending in the window keeps its effect
      const at = window.inventoryStart + slot - 9
      const shown = window.slots[at]
      if (shown && shown.type !== type) continue
      window.slots[at] = new Item(type, (shown?.count ?? 0) + add)
      window.slots[at].slot = at
    }
    sendWindow(player, view)
  }

  // ---------------------------------------------------------------- item entities
  function sendItemMetadata (entity) {
    const value = Item.toNotch(new Item(entity.gcItem.type, entity.gcItem.count))
    const metadata = modernMetadata
      ? [{ key: 8, type: 'item_stack', value }]
      : [{ key: 8, type: 7, value }]
    entity._writeOthersNearby('entity_metadata', { entityId: entity.id, metadata })
  }

  function spawnItem (world, position, type, count, pickupDelayMs, owner = null, keepsMs = OWNER_KEEPS_MS) {
    const entity = serv.spawnObject(itemEntityType, world, position, {
      velocity: new Vec3(0, 0, 0), itemId: type, itemCount: count
    })
    const now = Date.now()
    entity.gcItem = { type, count, pickupAt: now + pickupDelayMs, owner, ownerUntil: now + keepsMs }
    entity.sendMetadata = () => sendItemMetadata(entity)
    itemEntities.set(entity.id, entity)
    sendItemMetadata(entity)
    return entity
  }

  function pickUp () {
    const now = Date.now()
    for (const [id, entity] of itemEntities) {
      if (!serv.entities[id]) { itemEntities.delete(id); continue }
      if (now < entity.gcItem.pickupAt) continue
      let nearest = null
      let best = Infinity
      const { owner, ownerUntil } = entity.gcItem
      for (const player of serv.players) {
        if (player.world !== entity.world) continue
        if (owner && now < ownerUntil && player.username !== owner) continue
        const dx = player.position.x - entity.position.x
        const dz = player.position.z - entity.position.z
        const flat = Math.hypot(dx, dz)
        if (flat <= PICKUP_REACH && Math.abs(player.position.y - entity.position.y) <= 1.5 && flat < best) {
          nearest = player
          best = flat
        }
      }
      if (!nearest) continue
      const taken = giveItems(nearest, entity.gcItem.type, entity.gcItem.count)
      if (taken === 0) continue
      entity._writeNearby('collect', { collectedEntityId: id, collectorEntityId: nearest.id, pickupItemCount: taken })
      const handover = handovers.get(entity.gcItem.handover)
      if (handover && nearest.username === handover.receiver) {
        handover.received += taken
        const name = registry.items[entity.gcItem.type].name
        const mine = gifted.get(nearest.username) ?? {}
        gifted.set(nearest.username, { ...mine, [name]: (mine[name] ?? 0) + taken })
      } else if (handover) handover.stray += taken
      entity.gcItem.count -= taken
      if (entity.gcItem.count === 0) {
        itemEntities.delete(id)
        entity.destroy()
      } else {
        sendItemMetadata(entity)
      }
    }
  }
  serv.on('tick', pickUp)

  // A thrown stack lands 1.8 blocks ahead of the thrower, where vanilla's throw carries it.
  // What a closed window cannot put back is dropped for anyone (aimed false).
  // A throw within a declared hand-over (the giver's every stack of it, however many slots it
  // takes) carries the hand-over's id, so each pickup is credited to the hand-over it belongs
  // to, never to another delivery of the same item landing at the same receiver.
  function toss (player, type, count, aimed = true) {
    const yaw = (player.yaw ?? 0) * 2 * Math.PI / 256 // flying-squid keeps angles as bytes
    const heading = new Vec3(-Math.sin(yaw), 0, Math.cos(yaw))
    const declared = aimed ? handedTo.get(player.username) : undefined
    const live = declared && Date.now() < declared.until ? declared : null
    const owner = !aimed ? null : live ? live.receiver : facedPlayer(player, heading)
    if (live) handovers.get(live.id).thrown += count
    if (live && losesNextThrow.delete(player.username)) return // lost in flight: a fault test's stack never lands
    const entity = spawnItem(player.world, player.position.plus(heading.scaled(1.8)), type, count, TOSS_PICKUP_MS, owner, THROWN_KEEPS_MS)
    if (live) entity.gcItem.handover = live.id
  }
  const handedTo = new Map() // giver → { receiver, until, id }: the hand-over its throws belong to
  const handovers = new Map() // id → { receiver, thrown, received, stray }: what each hand-over moved
  const gifted = new Map() // receiver → { item → count }: what hand-overs put in each bag this episode
  const losesNextThrow = new Set() // givers whose next hand-over throw vanishes (fault injection)
  let lastHandover = 0

  // The player nearest the thrower's heading, within a narrow cone and a throw's range.
  function facedPlayer (thrower, heading) {
    let faced = null
    let best = THROWN_TO_CONE
    for (const other of serv.players) {
      if (other === thrower || other.world !== thrower.world) continue
      const dx = other.position.x - thrower.position.x
      const dz = other.position.z - thrower.position.z
      const gap = Math.hypot(dx, dz)
      if (gap === 0 || gap > THROWN_TO_RANGE) continue
      const angle = Math.acos(Math.min(1, Math.max(-1, (dx * heading.x + dz * heading.z) / gap)))
      if (angle < best) {
        faced = other.username
        best = angle
      }
    }
    return faced
  }

  // ---------------------------------------------------------------- windows
  const inventoryView = (player) => ({ id: 0, window: player.inventory, grid: [1, 2, 3, 4], width: 2 })

  function openWindow (player, type, title, fill) {
    nextWindowId = nextWindowId % 100 + 1
    const window = windows.createWindow(nextWindowId, type, title)
    fill(window)
    for (let k = 0; k < 36; k++) window.slots[window.inventoryStart + k] = clone(player.inventory.slots[9 + k], window.inventoryStart + k)
    player._client.write('open_window', {
      windowId: window.id,
      inventoryType: windows.windows[type].type,
      windowTitle: serv._createChatComponent({ text: title }).toNetworkFormat()
    })
    return window
  }

  function sendWindow (player, view) {
    stateId++
    player._client.write('window_items', {
      windowId: view.id,
      stateId,
      items: view.window.slots.map((item) => Item.toNotch(item)),
      carriedItem: Item.toNotch(view.window.selectedItem)
    })
  }

  // Copy what a container window changed back to where it lives.
  function writeBack (player, view) {
    if (view.id === 0) return
    const { window } = view
    for (let k = 0; k < 36; k++) player.inventory.slots[9 + k] = clone(window.slots[window.inventoryStart + k], 9 + k)
    if (view.chest) {
      const store = containers.get(view.chest)
      for (let i = 0; i < CHEST_SLOTS; i++) store[i] = clone(window.slots[i], i)
    }
    if (view.furnace) {
      const furnace = furnaceAt(view.furnace)
      for (let i = 0; i < 3; i++) furnace.slots[i] = clone(window.slots[i], i)
    }
  }

  function gridRows (view) {
    const ids = view.grid.map((slot) => view.window.slots[slot]?.type ?? null)
    const rows = []
    for (let i = 0; i < ids.length; i += view.width) rows.push(ids.slice(i, i + view.width))
    return rows
  }

  // Vanilla answers every grid click with the result slot's new content; clients wait for it.
  function updateResult (player, view) {
    const match = matchRecipe(registry, gridRows(view))
    const result = match ? new Item(match.id, match.count) : null
    const current = view.window.slots[0]
    if ((current?.type ?? null) !== (result?.type ?? null) || (current?.count ?? 0) !== (result?.count ?? 0)) {
      view.window.slots[0] = result
      if (result) result.slot = 0
    }
    stateId++
    player._client.write('set_slot', { windowId: view.id, stateId, slot: 0, item: Item.toNotch(result) })
  }

  function consumeGrid (view) {
    for (const slot of view.grid) {
      const item = view.window.slots[slot]
      if (item) view.window.updateSlot(slot, item.count > 1 ? clone({ ...item, type: item.type, count: item.count - 1 }, slot) : null)
    }
  }

  const sameItem = (notch, item) => {
    const parsed = notch ? Item.fromNotch(notch) : null
    return (parsed?.type ?? null) === (item?.type ?? null) && (parsed?.count ?? 0) === (item?.count ?? 0)
  }

  function handleClick (player, packet) {
    const view = packet.windowId === 0 ? inventoryView(player) : player.gcWindow
    if (!view || view.id !== packet.windowId) return
    const { window } = view
    const slot = packet.slot
    const click = { mode: packet.mode, mouseButton: packet.mouseButton, slot, item: slot === -999 ? null : (window.slots[slot] ?? null) }
    const held = window.selectedItem ? { type: window.selectedItem.type, count: window.selectedItem.count } : null
    const inSlot = click.item ? { type: click.item.type, count: click.item.count } : null
    try {
      window.acceptClick(click, player.gameMode)
    } catch (err) {
      sendWindow(player, view) // an unsupported click: put the client back in step
      return
    }
    if (slot === -999 && held) { // thrown out of the window
      const dropped = held.count - (window.selectedItem?.count ?? 0)
      if (dropped > 0) toss(player, held.type, dropped)
    } else if (packet.mode === 4 && inSlot) { // Q over a slot
      const dropped = inSlot.count - (window.slots[slot]?.count ?? 0)
      if (dropped > 0) toss(player, inSlot.type, dropped)
    }
    if (view.grid) {
      const taken = slot === 0 && inSlot && (window.slots[0]?.count ?? 0) < inSlot.count
      if (taken) consumeGrid(view)
      updateResult(player, view)
    }
    writeBack(player, view)
    const agrees = sameItem(packet.cursorItem, window.selectedItem) &&
      (packet.changedSlots ?? []).every(({ location, item }) => location < 0 || location === 0 || sameItem(item, window.slots[location]))
    if (!agrees) sendWindow(player, view)
  }

  // Grid leftovers and the cursor go back to the inventory when a window closes.
  function closeWindow (player, windowId) {
    const view = windowId === 0 ? inventoryView(player) : player.gcWindow
    if (!view || view.id !== windowId) return
    const { window } = view
    const leftovers = []
    if (view.grid) {
      for (const slot of view.grid) {
        if (window.slots[slot]) leftovers.push(window.slots[slot])
        window.updateSlot(slot, null)
      }
      window.updateSlot(0, null)
    }
    if (window.selectedItem) leftovers.push(window.selectedItem)
    window.selectedItem = null
    writeBack(player, view)
    if (view.id !== 0) player.gcWindow = null
    for (const item of leftovers) {
      const fitted = giveItems(player, item.type, item.count)
      if (fitted < item.count) toss(player, item.type, item.count - fitted, false)
    }
    sendWindow(player, inventoryView(player))
  }

  function openChest ({ block, player }) {
    const at = key(block.position)
    if (!containers.has(at)) containers.set(at, new Array(CHEST_SLOTS).fill(null))
    const store = containers.get(at)
    const window = openWindow(player, 'minecraft:generic_9x3', 'Chest', (w) => {
      for (let i = 0; i < CHEST_SLOTS; i++) w.slots[i] = clone(store[i], i)
    })
    player.gcWindow = { id: window.id, window, chest: at }
    sendWindow(player, player.gcWindow)
    return true
  }

  // A station someone else works at (the gate's busy station): it will not open for anyone
  // until then, and says for how long.
  const busyUntil = new Map() // "x,y,z" → ms
  function openCraftingTable ({ block, player }) {
    const left = (busyUntil.get(key(block.position)) ?? 0) - Date.now()
    if (left > 0) {
      player.chat(`gencoord:busy ${(left / 1000).toFixed(1)}`)
      return true
    }
    const window = openWindow(player, 'minecraft:crafting', 'Crafting', () => {})
    player.gcWindow = { id: window.id, window, grid: [1, 2, 3, 4, 5, 6, 7, 8, 9], width: 3 }
    sendWindow(player, player.gcWindow)
    return true
  }

  // ---------------------------------------------------------------- furnaces
  // Vanilla's furnace: a fuel item is burnt when there is something to smelt, each item takes
  // 200 ticks, and progress is lost when the fire goes out. The rules (what smelts into what,
  // how long each fuel burns) come from the caller, the same table the simulator reads.
  // A smoker is the same machine for food only, twice as fast, its fuel burning twice as fast.
  const furnaces = new Map() // "x,y,z" → { slots: [input, fuel, output], burn, burnTotal, cook, smoker }
  const rules = { smelting: {}, smoking: {}, fuel: {}, ticksPerItem: 200, ticksPerSmoke: 100 }

  function furnaceAt (at) {
    if (!furnaces.has(at)) {
      const smoker = serv.overworld.sync.getBlock(new Vec3(...at.split(',').map(Number)))?.name === 'smoker'
      furnaces.set(at, { slots: [null, null, null], burn: 0, burnTotal: 0, cook: 0, last: Date.now(), smoker })
    }
    return furnaces.get(at)
  }

  const perItem = (furnace) => (furnace.smoker ? rules.ticksPerSmoke : rules.ticksPerItem)

  function smeltsInto (furnace, item) {
    const result = item ? (furnace.smoker ? rules.smoking : rules.smelting)[registry.items[item.type].name] : null
    return result ? registry.itemsByName[result] : null
  }

  function outputFits (furnace, result) {
    const out = furnace.slots[2]
    return !out || (out.type === result.id && out.count < result.stackSize)
  }

  function stepFurnace (furnace, ticks) {
    let changed = false
    for (let t = 0; t < ticks; t++) {
      const result = smeltsInto(furnace, furnace.slots[0])
      const canSmelt = result && outputFits(furnace, result)
      if (furnace.burn > 0) furnace.burn--
      const fuel = furnace.slots[1]
      const burns = fuel ? Math.floor(rules.fuel[registry.items[fuel.type].name] * perItem(furnace) / rules.ticksPerItem) : 0
      if (furnace.burn <= 0 && canSmelt && burns) { // light the next fuel item
        furnace.burn = furnace.burnTotal = burns
        furnace.slots[1] = fuel.count > 1 ? new Item(fuel.type, fuel.count - 1) : null
        changed = true
      }
      if (furnace.burn > 0 && canSmelt) {
        if (++furnace.cook >= perItem(furnace)) {
          furnace.cook = 0
          const input = furnace.slots[0]
          furnace.slots[0] = input.count > 1 ? new Item(input.type, input.count - 1) : null
          furnace.slots[2] = new Item(result.id, (furnace.slots[2]?.count ?? 0) + 1)
          changed = true
        }
      } else {
        furnace.cook = canSmelt ? Math.max(0, furnace.cook - 2) : 0 // the fire is out: progress cools back
      }
    }
    return changed
  }

  function furnaceProperties (player, view, furnace) {
    // totals first: a client turns a current value into a fraction of the total it last heard
    const values = [[1, furnace.burnTotal], [0, furnace.burn], [3, perItem(furnace)], [2, furnace.cook]]
    for (const [property, value] of values) player._client.write('craft_progress_bar', { windowId: view.id, property, value })
  }

  function tickFurnaces () {
    const now = Date.now()
    for (const [at, furnace] of furnaces) {
      const ticks = Math.floor((now - furnace.last) / 50)
      if (ticks <= 0) continue
      furnace.last += ticks * 50
      const changed = stepFurnace(furnace, ticks)
      for (const player of serv.players) {
        const view = player.gcWindow
        if (!view || view.furnace !== at) continue
        if (changed) {
          for (let i = 0; i < 3; i++) view.window.slots[i] = clone(furnace.slots[i], i)
          sendWindow(player, view)
        }
        furnaceProperties(player, view, furnace)
      }
    }
  }
  serv.on('tick', tickFurnaces)

  function openFurnace ({ block, player }) {
    const at = key(block.position)
    const furnace = furnaceAt(at)
    const smoker = block.name === 'smoker'
    const window = openWindow(player, smoker ? 'minecraft:smoker' : 'minecraft:furnace', smoker ? 'Smoker' : 'Furnace', (w) => {
      for (let i = 0; i < 3; i++) w.slots[i] = clone(furnace.slots[i], i)
    })
    player.gcWindow = { id: window.id, window, furnace: at }
    sendWindow(player, player.gcWindow)
    furnaceProperties(player, player.gcWindow, furnace)
    return true
  }

  // ---------------------------------------------------------------- loot and animals
  // Ripe crops and animals drop a random amount: the caller's table (the simulator's, vanilla's
  // loot) rolled from the episode's seed, so a replay drops the same. Animals stand in herds; a
  // bare hand deals 1 per hit, and a killed animal drops its loot where it fell.
  const loot = { blocks: {}, mobs: {} }
  let random = () => 0.5
  const herdMobs = new Map() // entity id → { herd, animal }

  function seeded (seed) { // mulberry32: small, fast and the same on every machine
    let t = seed >>> 0
    return () => {
      t = (t + 0x6D2B79F5) >>> 0
      let r = Math.imul(t ^ (t >>> 15), 1 | t)
      r = (r + Math.imul(r ^ (r >>> 7), 61 | r)) ^ r
      return ((r ^ (r >>> 14)) >>> 0) / 4294967296
    }
  }

  function rolled (drops) {
    const out = []
    for (const drop of drops) {
      if ((drop.chance ?? 1) < 1 && random() >= drop.chance) continue
      const count = drop.min + Math.floor(random() * (drop.max - drop.min + 1))
      if (count > 0) out.push([registry.itemsByName[drop.item].id, count])
    }
    return out
  }

  // As with a mined block, what an animal drops goes to the player who killed it for a while
  // (not vanilla: there the nearest player wins, and two hunters side by side would race).
  const lastHit = new Map() // entity id → the username of the player who hit it last

  function killed (mob, world) {
    herdMobs.delete(mob.id)
    serv.destroyEntity(mob)
    const killer = lastHit.get(mob.id) ?? null
    lastHit.delete(mob.id)
    for (const [type, count] of rolled(loot.mobs[mob.gcAnimal]?.drops ?? [])) {
      spawnItem(world, mob.position.offset(0, 0.1, 0), type, count, DROP_PICKUP_MS, killer)
    }
  }

  function spawnHerd ({ herd, animal, spots }) {
    const type = registry.entitiesByName[animal]
    if (!type) throw new UserError(`Unknown animal '${animal}'`)
    // flying-squid spawns the entities minecraft-data files as "mob"; animals are filed apart
    registry.mobs[type.id] = registry.mobs[type.id] ?? type
    for (const [x, y, z] of spots) {
      const mob = serv.spawnMob(type.id, serv.overworld, new Vec3(x + 0.5, y, z + 0.5))
      mob.gcAnimal = animal
      mob.health = loot.mobs[animal]?.health ?? mob.health
      mob.takeDamage = ({ damage = 1 }) => { // no knockback: a herd animal stays where it was hit
        mob.health -= damage
        mob._writeOthers('entity_status', { entityId: mob.id, entityStatus: mob.health > 0 ? 2 : 3 })
        if (mob.health <= 0) killed(mob, mob.world)
      }
      herdMobs.set(mob.id, { herd, animal })
    }
  }

  // ---------------------------------------------------------------- digging
  function dropsOf (block, held) {
    if (!block.canHarvest(held ? held.type : null)) return []
    if (loot.blocks[block.name]) return rolled(loot.blocks[block.name].drops)
    const vanilla = registry.blockLoot?.[block.name]
    const ids = vanilla
      ? vanilla.drops.filter((drop) => !drop.silkTouch).map((drop) => registry.itemsByName[drop.item].id)
      : block.drops.map((id) => (typeof id === 'number' ? id : id.drop?.id ?? id.id)).filter((id) => id !== undefined)
    return ids.map((id) => [id, 1])
  }

  // Where a drop comes to rest: it falls through what has no collision box (air, grass, flowers)
  // onto the first block that has one, as vanilla's item physics settles it. The skills reckon the
  // same cell (skills.js, restingCell) to walk to it.
  function restingCell (world, position) {
    const at = position.floored()
    for (let fallen = 0; fallen < MAX_FALL && at.y > MIN_Y; fallen++) {
      const below = registry.blocksByStateId[world.sync.getBlockStateId(at.offset(0, -1, 0))]
      if (below && below.boundingBox !== 'empty') break
      at.y -= 1
    }
    return at
  }

  // ---------------------------------------------------------------- players
  function sendTabList (player) {
    if (!serv.supportFeature('playerInfoActionIsBitfield')) return
    player._client.write('player_info', {
      action: { add_player: true, update_listed: true },
      data: serv.players.filter((p) => p !== player).map((p) => ({
        uuid: p.uuid, player: { name: p.username, properties: p.profileProperties ?? [] }, listed: true
      }))
    })
  }

  serv.on('newPlayer', (player) => {
    patchWrites(player._client)
    player.entityType = registry.entitiesByName.player.id
    player.gcWindow = null
    for (const event of ['window_click', 'close_window']) player._client.removeAllListeners(event)
    player._client.on('window_click', (packet) => handleClick(player, packet))
    player._client.prependListener('use_entity', ({ target, mouse }) => { if (mouse === 1) lastHit.set(target, player.username) })
    player._client.on('close_window', ({ windowId }) => closeWindow(player, windowId))
    // Login completes on any movement packet, not only on the look/flying an idle bot may never send.
    player.waitPlayerLogin = () => new Promise((resolve) => {
      const events = ['flying', 'look', 'position', 'position_look']
      const done = () => { events.forEach((e) => player._client.removeListener(e, done)); resolve() }
      events.forEach((e) => player._client.on(e, done))
    })
    const login = player.login
    player.login = async () => {
      await login()
      sendTabList(player)
      player.chat('gencoord:ready')
    }
    player.on('dug', (data, cancelled) => {
      if (cancelled) return
      data.dropBlock = false
      const held = player.inventory.slots[36 + player.heldItemSlot]
      const rests = restingCell(player.world, data.position) // a log dug up a trunk drops to the ground
      for (const [type, count] of dropsOf(data.block, held)) {
        spawnItem(player.world, rests.offset(0.5, 0.1, 0.5), type, count, DROP_PICKUP_MS, player.username)
      }
    })
  })

  // ---------------------------------------------------------------- commands
  const UserError = require('flying-squid').UserError
  const itemByName = (name) => {
    const data = registry.itemsByName[name.replace(/^minecraft:/, '')]
    if (!data) throw new UserError(`Unknown item '${name}'`)
    return data
  }

  serv.once('asap', () => {
    serv.onBlockInteraction('chest', openChest)
    serv.onBlockInteraction('crafting_table', openCraftingTable)
    serv.onBlockInteraction('furnace', openFurnace)
    serv.onBlockInteraction('smoker', openFurnace)

    // A block replaced at a container's position takes the container with it.
    const setBlock = serv.setBlock
    serv.setBlock = async (world, position, stateId) => {
      containers.delete(key(position))
      furnaces.delete(key(position))
      return setBlock(world, position, stateId)
    }

    serv.commands.add({
      base: 'give',
      info: 'Give items to a player, in stacks',
      usage: '/give <player> <item> [count]',
      op: true,
      parse (args, ctx) {
        const [who, item, count = '1'] = args.split(' ')
        if (!who || !item || !/^\d+$/.test(count)) return false
        const players = serv.getPlayers(who, ctx.player)
        if (players.length < 1) throw new UserError('Player not found')
        return { players, item: itemByName(item), count: parseInt(count, 10) }
      },
      action ({ players, item, count }) {
        for (const player of players) giveItems(player, item.id, count)
      }
    })

    serv.commands.add({
      base: 'clear',
      info: 'Take items from a player\'s inventory (all of them, or up to maxCount of one item)',
      usage: '/clear <player> [item] [maxCount]',
      op: true,
      parse (args, ctx) {
        const [who, item, count] = args.trim().split(/\s+/)
        if (count !== undefined && !/^\d+$/.test(count)) return false
        const players = serv.getPlayers(who ?? '', ctx.player)
        if (players.length < 1) throw new UserError('Player not found')
        return { players, item: item ? itemByName(item) : null, count: count === undefined ? Infinity : parseInt(count, 10) }
      },
      action ({ players, item, count }) {
        for (const player of players) {
          let left = count
          for (let slot = 0; slot < player.inventory.slots.length && left > 0; slot++) {
            const stack = player.inventory.slots[slot]
            if (!stack || (item && stack.type !== item.id)) continue
            const taken = Math.min(left, stack.count)
            left -= taken
            player.inventory.updateSlot(slot, taken === stack.count ? null : new Item(stack.type, stack.count - taken))
          }
          if (!item) player.inventory.selectedItem = null
        }
      }
    })

    serv.commands.add({
      base: 'occupy',
      info: 'Keep a station taken for a while: it opens for nobody until then',
      usage: '/occupy <x> <y> <z> <seconds>',
      op: true,
      parse (args) {
        const parts = args.trim().split(/\s+/)
        if (parts.length !== 4 || parts.slice(0, 3).some((p) => !/^-?\d+$/.test(p)) || !/^\d+(\.\d+)?$/.test(parts[3])) return false
        return { at: parts.slice(0, 3).join(','), seconds: parseFloat(parts[3]) }
      },
      action ({ at, seconds }) {
        busyUntil.set(at, Math.max(busyUntil.get(at) ?? 0, Date.now() + seconds * 1000))
      }
    })

    serv.commands.add({
      base: 'fill',
      info: 'Fill a box with one block',
      usage: '/fill <x1> <y1> <z1> <x2> <y2> <z2> <block>',
      op: true,
      parse (args) {
        const parts = args.split(' ')
        if (parts.length !== 7 || parts.slice(0, 6).some((p) => !/^-?\d+$/.test(p))) return false
        const [x1, y1, z1, x2, y2, z2] = parts.slice(0, 6).map(Number)
        const block = registry.blocksByName[parts[6].replace(/^minecraft:/, '')]
        if (!block) throw new UserError(`Unknown block '${parts[6]}'`)
        const volume = (Math.abs(x2 - x1) + 1) * (Math.abs(y2 - y1) + 1) * (Math.abs(z2 - z1) + 1)
        if (volume > MAX_FILL) throw new UserError(`Too many blocks in the area (${volume} > ${MAX_FILL})`)
        return { from: new Vec3(Math.min(x1, x2), Math.min(y1, y2), Math.min(z1, z2)), to: new Vec3(Math.max(x1, x2), Math.max(y1, y2), Math.max(z1, z2)), block }
      },
      async action ({ from, to, block }) {
        // as vanilla, only cells that change are written: each write is a packet to every
        // player and a neighbour update, and a reset's clearing box is nearly all air already
        const writes = []
        for (let x = from.x; x <= to.x; x++) {
          for (let y = from.y; y <= to.y; y++) {
            for (let z = from.z; z <= to.z; z++) {
              // read and written in this same turn, so a command that follows lands after the fill
              const at = new Vec3(x, y, z)
              const loaded = Boolean(serv.overworld.sync.getColumnAt(at))
              if (loaded && serv.overworld.sync.getBlockStateId(at) === block.defaultState) continue
              writes.push(serv.setBlock(serv.overworld, at, block.defaultState))
            }
          }
        }
        await Promise.all(writes)
      }
    })

    serv.commands.add({
      base: 'item',
      info: 'Put items in a container slot',
      usage: '/item replace block <x> <y> <z> container.<slot> with <item> [count]',
      op: true,
      parse (args) {
        const m = args.match(/^replace block (-?\d+) (-?\d+) (-?\d+) container\.(\d+) with (\S+)(?: (\d+))?$/)
        if (!m) return false
        const slot = parseInt(m[4], 10)
        if (slot >= CHEST_SLOTS) throw new UserError(`No container slot ${slot}`)
        return { at: `${m[1]},${m[2]},${m[3]}`, slot, item: itemByName(m[5]), count: parseInt(m[6] ?? '1', 10) }
      },
      action ({ at, slot, item, count }) {
        if (!containers.has(at)) containers.set(at, new Array(CHEST_SLOTS).fill(null))
        containers.get(at)[slot] = count > 0 ? new Item(item.id, Math.min(count, item.stackSize)) : null
      }
    })
  })

  // ---------------------------------------------------------------- doors
  // Vanilla places a door as two blocks, its lower and upper half; flying-squid sets the one
  // block clicked. A door item now sets its lower half there and its upper half above it
  // (registered once flying-squid's own placing plugin, loaded after this one, is in place).
  setImmediate(() => {
    for (const item of registry.itemsArray.filter((i) => i.name.endsWith('_door') && registry.blocksByName[i.name])) {
      const block = registry.blocksByName[item.name]
      const half = (value, properties) => serv.setBlockDataProperties(block.defaultState - block.minStateId, block.states, { ...properties, half: value })
      serv.onItemPlace(item.name, ({ player, placedPosition, properties }) => {
        const upper = block.minStateId + half('upper', properties)
        setImmediate(() => player.setBlock(placedPosition.offset(0, 1, 0), upper))
        return { id: block.id, data: half('lower', properties) }
      }, false)
    }
  })

  // ---------------------------------------------------------------- ground truth
  serv.gencoord = {
    dump () {
      const players = {}
      for (const player of serv.players) {
        players[player.username] = {
          inventory: countItems(player.inventory.slots.slice(9, 45).concat([player.inventory.slots[45], player.inventory.selectedItem])),
          position: [player.position.x, player.position.y, player.position.z]
        }
      }
      const chests = {}
      for (const [at, store] of containers) chests[at] = countItems(store)
      const ovens = {}
      for (const [at, furnace] of furnaces) ovens[at] = { input: countItems([furnace.slots[0]]), fuel: countItems([furnace.slots[1]]), output: countItems([furnace.slots[2]]) }
      return { players, containers: chests, furnaces: ovens, items: [...itemEntities.values()].map((e) => ({ item: registry.items[e.gcItem.type].name, count: e.gcItem.count })) }
    },
    freeStations () {
      busyUntil.clear()
    },
    // The giver's next throw is a hand-over to this receiver (facing alone cannot tell, in a crowd,
    // the receiver from a player behind it at a narrower angle).
    handTo ({ giver, receiver }) {
      const id = ++lastHandover
      handedTo.set(giver, { receiver, until: Date.now() + HANDED_TO_MS, id })
      handovers.set(id, { receiver, thrown: 0, received: 0, stray: 0 })
      return { handover: id }
    },
    // What a hand-over has moved so far: thrown by its giver, picked up by its receiver, by anyone
    // else; and where its stack still lies (null once none does).
    delivered ({ handover }) {
      const moved = handovers.get(handover)
      if (!moved) return null
      const lying = [...itemEntities.values()].find((e) => e.gcItem.handover === handover && serv.entities[e.id])
      const at = lying ? { x: lying.position.x, y: lying.position.y, z: lying.position.z } : null
      return { thrown: moved.thrown, received: moved.received, stray: moved.stray, at }
    },
    // What hand-overs have put in a player's bag this episode, by item: the rest of what it holds
    // came from its own work (a gift landing while it digs must not pass for the drop it dug).
    gifts ({ player }) {
      return gifted.get(player) ?? {}
    },
    // Fault injection: the giver's next hand-over throw is lost in flight (it leaves the bag, never lands).
    loseNextThrow ({ giver }) {
      losesNextThrow.add(giver)
    },
    // Recipe variants the simulator's table has beyond minecraft-data's (see recipes.js).
    addRecipes (variants) {
      addRecipes(registry, variants)
    },
    // What smelts into what and how long each fuel burns: the simulator's own table.
    furnaceRules ({ smelting, smoking, fuel, ticksPerItem, ticksPerSmoke }) {
      Object.assign(rules, { smelting, smoking, fuel, ticksPerItem, ticksPerSmoke })
    },
    // The episode's loot table and seed, and its herds (every animal of the last episode goes).
    herds ({ table, seed, herds }) {
      Object.assign(loot, table)
      random = seeded(seed)
      for (const id of herdMobs.keys()) if (serv.entities[id]) serv.destroyEntity(serv.entities[id])
      herdMobs.clear()
      for (const herd of herds) spawnHerd(herd)
      return { animals: [...herdMobs].map(([id, { herd, animal }]) => ({ id, herd, animal })) }
    },
    // Furnaces and smokers that start the episode fuelled: empty but for their fuel slot.
    fuelStations ({ stations }) {
      for (const { at, smoker, fuel } of stations) {
        const [item, count] = Object.entries(fuel)[0] ?? []
        furnaces.set(at.join(','), {
          slots: [null, item ? new Item(registry.itemsByName[item].id, count) : null, null],
          burn: 0, burnTotal: 0, cook: 0, last: Date.now(), smoker
        })
      }
    },
    // Remove loose item entities left by a previous episode.
    clearItems () {
      for (const entity of itemEntities.values()) entity.destroy()
      itemEntities.clear()
      handedTo.clear()
      handovers.clear()
      gifted.clear()
      losesNextThrow.clear()
    }
  }
}
