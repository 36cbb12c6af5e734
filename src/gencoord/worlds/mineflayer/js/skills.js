'use strict'
// Mineflayer skills: one function per compiled executor action.
//
// A skill checks what the simulator checks (same codes, same messages) before it acts,
// then acts through the ordinary client protocol only, so it works on any server. A skill
// that cannot finish throws SkillFailure with a stable code; nothing is left half-done
// that the bridge does not report.

const { Vec3 } = require('vec3')
const { goals } = require('mineflayer-pathfinder')

const REACH = 4.5 // survival reach, measured as the simulator does: feet to the ref
const REF_RANGE = 3
// A walk is judged by progress, not by the clock alone: on a loaded machine the server and
// the bots' physics run slower in wall time, and a bot still closing in must not be failed.
// It fails once it has come no closer for GOTO_STALL_MS, or at the hard cap (kept under the
// Python side's 90 s per action).
const GOTO_STALL_MS = 20000
const GOTO_TIMEOUT_MS = 75000
const GOTO_PROGRESS_BLOCKS = 0.5
const PICKUP_TIMEOUT_MS = 4000
const HANDOFF_TIMEOUT_MS = 6000
const GOAL_CHANGED_TRIES = 3 // walks a goal set elsewhere may cut short before the walk gives up
const STATION_PLACE_TRIES = 3 // placements of a station whose answer the server never sent
const STATION_WAIT_MS = 30000 // how long a bot waits for a teammate's batch to leave a shared furnace or smoker
const TOSS_CARRY = 1.8 // how far ahead of the thrower a thrown stack lands (the server's rule, as vanilla's throw)
const PICKUP_FLAT = 1.5 // vanilla's pickup reach, flat
const TOSS_PICKUP_MS = 2000 // vanilla: nobody picks up a thrown stack for 40 ticks
const TOSS_GRACE_MS = 1000 // ticks late under load
const RECEIVER_FREE_MS = 20000 // how long a stack waits for a receiver busy elsewhere (the server keeps it for it 30 s)
const STACK_SEEN_MS = 1000 // a thrown stack's spawn reaches the receiver's client well within this
const LANDING_MS = 2000 // a bot that stepped off a block two high is on the ground well within this
const CLOSE_IN_MS = 1500 // a straight last stretch of a walk: a few blocks at walking speed
const EYE_HEIGHT = 1.62 // a level look: the walk is straight ahead, not up or down
const LEVEL_GAP = 1 // blocks between giver's and receiver's feet a thrown stack still reaches (pickup: 1.5)
const SYNC_MS = 1000 // a server answers a resync click within a tick or two; one that never does is not waited on

class SkillFailure extends Error {
  constructor (code, message, retryAfterS = null) {
    super(message)
    this.code = code
    this.retryAfterS = retryAfterS // when waiting is the remedy (a busy station): how long
  }
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

function countOf (bot, name) {
  const item = bot.registry.itemsByName[name]
  if (!item) return 0
  return bot.inventory.items().filter((i) => i.type === item.id).reduce((n, i) => n + i.count, 0) +
    (bot.inventory.selectedItem?.type === item.id ? bot.inventory.selectedItem.count : 0)
}

function inventoryOf (bot) {
  const counts = {}
  for (const item of bot.inventory.items()) counts[item.name] = (counts[item.name] ?? 0) + item.count
  return counts
}

function itemId (bot, name) {
  const item = bot.registry.itemsByName[name]
  if (!item) throw new SkillFailure('UNKNOWN_ITEM', `${name} is not an item`)
  return item.id
}

function need (bot, name, count) {
  const have = countOf(bot, name)
  if (have < count) throw new SkillFailure('MISSING_ITEMS', `${bot.username} has ${have} ${name}, needs ${count}`)
}

async function waitFor (predicate, timeoutMs, onTimeout) {
  const until = Date.now() + timeoutMs
  while (!(await predicate())) {
    if (Date.now() > until) throw onTimeout()
    await sleep(50)
  }
}

function refCenter (pos) {
  return new Vec3(pos[0] + 0.5, pos[1] + 0.5, pos[2] + 0.5)
}

function withinReach (bot, pos, what) {
  const feet = bot.entity.position
  const gap = feet.distanceTo(new Vec3(pos[0] + 0.5, pos[1], pos[2] + 0.5))
  if (gap > REACH) throw new SkillFailure('OUT_OF_REACH', `${bot.username} is ${gap.toFixed(1)} blocks from ${what} (reach ${REACH})`)
}

// Walk to within `range` blocks of `point`. A bot that close has arrived, whatever the
// pathfinder thinks: it judges its goal on whole-block nodes, so a bot standing 2.9 blocks
// from a ref (range 3), or 2.1 from a peer (range 2.5), whose last node is taken by the other
// bot can keep trying, and stall.
// The walk ends with setGoal(null), never pathfinder.stop(): stop() only raises a flag that
// the pathfinder acts on at its next node, so a bot that had already arrived kept the flag,
// and the next walk's setGoal ended that walk at once ("Path was stopped before it could be
// completed").
// With `level`, the bot also ends on the block level of `point` (a peer's feet): within range
// of a peer may be on top of a resource area's stacked blocks, and a stack thrown from up there
// stays at the thrower's height, out of the receiver's pickup reach. Either way the walk
// returns once the bot stands on the ground: whatever it does next starts from rest, not from
// the top of a jump or half-way down a fall.
// One walk at a time per bot: a giver walking its receiver onto a stack and the receiver's own
// next action (a hunt, a dig) would otherwise set goals over each other and end both walks
// ("The goal was changed before it could be completed!"). A second walk waits for the first.
const walks = new Map() // username → the walk in progress

async function goto (bot, point, range, options = {}) {
  while (walks.has(bot.username)) await walks.get(bot.username).catch(() => {})
  const walk = walkTo(bot, point, range, options)
  walks.set(bot.username, walk)
  try {
    return await walk
  } finally {
    if (walks.get(bot.username) === walk) walks.delete(bot.username)
  }
}

async function walkTo (bot, point, range, { level = false, straight = false, stand = null } = {}) {
  const target = new Vec3(point.x, point.y, point.z)
  const near = new goals.GoalNear(target.x, target.y, target.z, range)
  const goal = stand ?? (level ? new goals.GoalCompositeAll([near, new goals.GoalY(target.y)]) : near)
  const arrived = stand
    ? () => stand.isEnd(bot.entity.position.floored())
    : () => bot.entity.position.distanceTo(target) <= range &&
      (!level || Math.floor(bot.entity.position.y + 0.01) === Math.floor(target.y + 0.01))
  const started = Date.now()
  let closest = bot.entity.position.distanceTo(target)
  let lastProgress = started
  let over = false // the watchdog has ended this walk: a goal changed after that is not chased again
  let timer
  const watchdog = new Promise((resolve, reject) => {
    timer = setInterval(() => {
      const now = Date.now()
      const gap = bot.entity.position.distanceTo(target)
      if (arrived()) {
        over = true
        bot.pathfinder.setGoal(null)
        resolve()
        return
      }
      if (gap < closest - GOTO_PROGRESS_BLOCKS) {
        closest = gap
        lastProgress = now
      }
      const stalled = now - lastProgress > GOTO_STALL_MS
      if (stalled || now - started > GOTO_TIMEOUT_MS) {
        over = true
        bot.pathfinder.setGoal(null)
        reject(new SkillFailure('PATH_TIMEOUT', stalled
          ? `${bot.username} came no closer for ${GOTO_STALL_MS / 1000} s (${gap.toFixed(1)} blocks away)`
          : `${bot.username} did not arrive within ${GOTO_TIMEOUT_MS / 1000} s`))
      }
    }, 250)
  })
  const pursue = async () => {
    // "The goal was changed before it could be completed!": something set another goal mid-walk (a
    // herd animal's or a receiver's position moved on); the walk replans towards its own goal
    for (let tries = 1; ; tries++) {
      try {
        return await bot.pathfinder.goto(goal)
      } catch (err) {
        if (over || arrived() || !/goal was changed/i.test(err.message) || tries >= GOAL_CHANGED_TRIES) throw err
      }
    }
  }
  try {
    await Promise.race([pursue(), watchdog])
  } catch (err) {
    if (err instanceof SkillFailure) throw err
    const code = err.name === 'NoPath' || /no path/i.test(err.message) ? 'NO_PATH' : 'PATH_FAILED'
    throw new SkillFailure(code, `${bot.username} cannot get there: ${err.message}`)
  } finally {
    over = true
    clearInterval(timer)
  }
  if (straight) await closeIn(bot, target, arrived)
  await settles(() => bot.entity.onGround, LANDING_MS) // a bot that cannot land within it is standing on something odd; it acts from there
}

// The pathfinder's own goal test is on whole blocks: a bot in the block next to a stack 1.6
// blocks away has "reached" range 1 and stops there, out of pickup reach (a CI hand-over
// failed so). With `straight`, a walk to an item on the ground walks its last stretch
// straight at it; a bot that cannot close in (a wall in the way) stops trying after
// CLOSE_IN_MS and the caller's own check decides. Other walks keep the pathfinder's stop: a
// bot pushed on towards a block it is about to place lands in the wrong spot.
async function closeIn (bot, target, arrived) {
  if (arrived()) return
  await bot.lookAt(new Vec3(target.x, bot.entity.position.y + EYE_HEIGHT, target.z), true)
  bot.setControlState('forward', true)
  try {
    await settles(arrived, CLOSE_IN_MS)
  } finally {
    bot.setControlState('forward', false)
  }
}

function blockAt (bot, pos) {
  const block = bot.blockAt(new Vec3(pos[0], pos[1], pos[2]))
  if (!block) throw new SkillFailure('CHUNK_NOT_LOADED', `${bot.username} does not see ${pos.join(',')}`)
  return block
}

// ------------------------------------------------------------------ skills
async function goTo (ctx, bot, action) {
  if (action.target_kind === 'agent') {
    const peer = ctx.bots[action.target]
    if (!peer) throw new SkillFailure('UNKNOWN_AGENT', `${action.target} is not in this world`)
    await goto(bot, peer.entity.position, 2.5, { level: true })
    arrivedAt.delete(bot.username)
    return
  }
  const ref = ctx.layout.refs[action.target]
  if (!ref) throw new SkillFailure('UNKNOWN_REF', `${action.target} does not exist in this world`)
  const [x, y, z] = ref.position
  // a walled ref: the direct route runs into the wall (as in the simulator, wherever the bot
  // stands); a detour walks round to the opening, and no bot digs through
  if (ctx.walls[action.target] && !action.detour) throw new SkillFailure('PATH_BLOCKED', `the route to ${action.target} is blocked; a detour is needed`)
  // near enough to act on the ref from where the bot stops (resource areas and sites
  // are blocks around it, not one block)
  await goto(bot, { x, y, z }, REF_RANGE)
  arrivedAt.set(bot.username, action.target)
}

// Blocks a bot is digging right now: two bots working one resource area dig different blocks.
const digging = new Set()
const cellKey = (p) => `${p.x},${p.y},${p.z}`

async function obtainBlock (ctx, bot, action) {
  const ref = ctx.layout.refs[action.source]
  await reachRef(bot, ref, action.source)
  const blockType = bot.registry.blocksByName[action.block]
  if (!blockType) throw new SkillFailure('NOT_BREAKABLE', `${action.block} cannot be broken`)
  const cells = (ctx.layout.resources[action.source] ?? [])
    .map((pos) => blockAt(bot, pos))
    .filter((block) => block.type === blockType.id)
  if (cells.length === 0) throw new SkillFailure('SOURCE_EXHAUSTED', `${action.source} has no ${action.block} left`)
  const here = bot.entity.position
  const free = cells.filter((block) => !digging.has(cellKey(block.position)))
  if (free.length === 0) throw new SkillFailure('SOURCE_EXHAUSTED', `${action.source}'s last ${action.block} is being dug by another agent`)
  free.sort((a, b) => a.position.distanceTo(here) - b.position.distanceTo(here))
  const target = free[0]
  digging.add(cellKey(target.position))
  try {
    await digAndCollect(ctx, bot, action, blockType, target)
  } finally {
    digging.delete(cellKey(target.position))
  }
}

// Drops a bot has dug but not picked up yet. A drop that lies within the bot's pickup reach
// flies to it during vanilla's 10-tick pickup delay while the bot already digs the next
// block; before anything else (walking away, handing over, crafting) the bot settles them.
const owed = new Map() // username → { item → { count its inventory must reach, cells its drops rest in } }

// A bot that walked off before its drops flew in (to fetch a stack thrown short of it) walks back
// onto them, as a player would, rather than leave them on the ground.
async function collectOwed (ctx, bot) {
  const mine = owed.get(bot.username)
  if (!mine) return
  owed.delete(bot.username)
  for (const [item, { count, cells }] of Object.entries(mine)) {
    const collected = async () => (await ownCount(ctx, bot, item)) >= count
    for (const cell of cells) {
      if (await collected()) break
      if (!inPickupReach(bot, cell)) await goto(bot, cell.offset(0.5, 0, 0.5), 1, { straight: true })
    }
    await waitFor(collected, PICKUP_TIMEOUT_MS,
      () => new SkillFailure('DROP_NOT_COLLECTED', `${bot.username} dug ${item} but its drops did not all come to it (${countOf(bot, item)} in its bag, hand-overs included)`))
  }
}

// What a bot holds of an item from its own work: its bag less what hand-overs put there. A
// teammate's gift landing while it digs would otherwise pass for the drop it dug, and the drop
// would be left on the ground (a craft then lacks one).
async function ownCount (ctx, bot, item) {
  return countOf(bot, item) - await ctx.gifts(bot.username, item)
}

function forgetOwed () {
  owed.clear() // a new episode: what the last one left on the ground is cleared with it
  arrivedAt.clear()
}

// vanilla's pickup check (1.5 blocks flat and up or down), less a hair for rounding
function withinPickup (feet, at) {
  return Math.hypot(feet.x - at.x, feet.z - at.z) <= PICKUP_FLAT - 0.05 && Math.abs(feet.y - at.y) <= PICKUP_FLAT - 0.05
}

function inPickupReach (bot, cell) {
  return withinPickup(bot.entity.position, cell.offset(0.5, 0.1, 0.5))
}

// Where a dug block's drop comes to rest: it falls through what has no collision box onto the
// first block that has one (the server's rule, plugin.js restingCell, as vanilla's item physics).
// A log dug up a trunk lies at the trunk's foot, not in the air where the log was.
function restingCell (bot, position) {
  const at = position.clone()
  for (let fallen = 0; fallen < 64; fallen++) {
    const below = bot.blockAt(at.offset(0, -1, 0))
    if (!below || below.boundingBox !== 'empty') break
    at.y -= 1
  }
  return at
}

// The ref each bot last walked to (its go_to arrived there). A bot about to act on that ref and
// now out of reach of it was displaced (pushed off by teammates in a crowd, or off fetching a
// stack): it walks back first, as a player would. A bot that never walked there fails
// OUT_OF_REACH, as in the simulator.
const arrivedAt = new Map() // username → ref name

async function reachRef (bot, ref, what) {
  const [x, y, z] = ref.position
  const away = bot.entity.position.distanceTo(new Vec3(x + 0.5, y, z + 0.5)) > REACH
  if (away && arrivedAt.get(bot.username) === what) await goto(bot, { x, y, z }, REF_RANGE)
  withinReach(bot, ref.position, what)
}

async function digAndCollect (ctx, bot, action, blockType, target) {
  const tool = bot.pathfinder.bestHarvestTool(target)
  if (blockType.harvestTools && !(tool && blockType.harvestTools[tool.type])) {
    const names = Object.keys(blockType.harvestTools).map((id) => bot.registry.items[id].name).sort()
    throw new SkillFailure('NOT_HARVESTABLE', `${action.block} drops nothing without one of: ${names.join(', ')}`)
  }
  const drop = ctx.drops[action.block] ?? action.block
  // own work only, relative to now: a gift it has since used up leaves its own count below zero
  const expected = Math.max(await ownCount(ctx, bot, drop), owed.get(bot.username)?.[drop]?.count ?? -Infinity) + 1
  if (tool) await bot.equip(tool, 'hand')
  if (target.position.distanceTo(bot.entity.position.offset(0, 1.6, 0)) > REACH) {
    await collectOwed(ctx, bot) // about to walk away from what is still on the ground
    await goto(bot, target.position.offset(0.5, 0, 0.5), 2)
  }
  await bot.dig(target, true)
  const rests = restingCell(bot, target.position)
  if (inPickupReach(bot, rests)) {
    const earlier = owed.get(bot.username)?.[drop]?.cells ?? []
    owed.set(bot.username, { ...owed.get(bot.username), [drop]: { count: expected, cells: [...earlier, rests] } })
    return
  }
  await collectOwed(ctx, bot)
  // out of reach: walk over at once to where it rests (the middle of the cell it fell to)
  await goto(bot, rests.offset(0.5, 0, 0.5), 1, { straight: true })
  const collected = async () => (await ownCount(ctx, bot, drop)) >= expected
  await waitFor(collected, PICKUP_TIMEOUT_MS,
    () => new SkillFailure('DROP_NOT_COLLECTED', `${bot.username} dug ${action.block} but picked up no ${drop}`))
}

// ------------------------------------------------------------------ hunting
const HIT_MS = 250 // a bare hand at full charge: one hit every 5 ticks
const ATTACK_REACH = 3
const KILL_TIMEOUT_MS = 15000

// Kill animals of the herd, nearest first (one no teammate is after), and pick up what each
// drops, until the bag holds `count` more of the item: an animal may drop none (a rabbit).
async function hunt (ctx, bot, action) {
  const target = countOf(bot, action.item) + action.count
  while (countOf(bot, action.item) < target) {
    const here = bot.entity.position
    const animals = [...ctx.herds].filter(([id, herd]) => herd === action.herd && bot.entities[id] && !ctx.hunted.has(id))
      .map(([id]) => bot.entities[id])
      .sort((a, b) => a.position.distanceTo(here) - b.position.distanceTo(here))
    if (animals.length === 0) {
      throw new SkillFailure('SOURCE_EXHAUSTED', `${action.herd} has no ${action.animal} left; ${bot.username} holds ${countOf(bot, action.item)} of ${target} ${action.item}`)
    }
    const prey = animals[0]
    const had = countOf(bot, action.item)
    ctx.hunted.add(prey.id)
    const fell = prey.position.clone()
    await goto(bot, prey.position, 2)
    const until = Date.now() + KILL_TIMEOUT_MS
    while (bot.entities[prey.id]) {
      if (Date.now() > until) throw new SkillFailure('KILL_TIMEOUT', `${bot.username} did not kill a ${action.animal} in ${KILL_TIMEOUT_MS / 1000} s`)
      fell.update(prey.position)
      // vanilla's attack reach is 3 blocks; the server does not check it, so the skill does
      if (bot.entity.position.distanceTo(prey.position) > ATTACK_REACH) await goto(bot, prey.position, 2)
      await bot.lookAt(prey.position.offset(0, 0.5, 0), true)
      bot.attack(prey)
      await sleep(HIT_MS)
    }
    // its drops lie where it fell: walk onto them, and wait for every stack there to fly in
    for (let tries = 0; tries < 3 && !withinPickup(bot.entity.position, fell); tries++) await goto(bot, fell, 1, { straight: true })
    const near = () => Object.values(bot.entities).filter((e) => e.name === 'item' && e.position.distanceTo(fell) < 2)
    // done once what it hunts for is in the bag, or nothing lies there any more (a rabbit may drop no meat)
    await waitFor(() => countOf(bot, action.item) > had || near().length === 0, PICKUP_TIMEOUT_MS,
      () => new SkillFailure('DROP_NOT_COLLECTED', `${bot.username} killed a ${action.animal} but did not pick up its drops (${near().length} stacks still lie where it fell)`))
  }
}

async function giveItem (ctx, bot, action) {
  const peer = ctx.bots[action.to]
  if (!peer) throw new SkillFailure('UNKNOWN_AGENT', `${action.to} is not in this world`)
  need(bot, action.item, action.count)
  // the receiver moved on after the giver walked up (to dig, to a station): follow it, as a
  // player would (the simulator's giver does the same)
  // a receiver busy elsewhere (hunting, digging) may move on while the giver walks up: follow it a few times
  for (let tries = 0; tries < 3 && bot.entity.position.distanceTo(peer.entity.position) > REACH; tries++) {
    await goto(bot, peer.entity.position, 2, { level: true })
  }
  const gap = bot.entity.position.distanceTo(peer.entity.position)
  if (gap > REACH) throw new SkillFailure('OUT_OF_REACH', `${bot.username} is ${gap.toFixed(1)} blocks from ${action.to} (reach ${REACH})`)
  const before = countOf(peer, action.item)
  // within reach but too far, or too high or low, for a thrown stack (it stays at the thrower's
  // feet height) to land where the receiver can pick it up: step in on the receiver's level,
  // as a player would, rather than throw it on the ground
  await settles(() => bot.entity.onGround, LANDING_MS)
  const tooFar = flatGap(bot.entity.position, peer.entity.position) > TOSS_CARRY + PICKUP_FLAT - 0.3
  if (tooFar || Math.abs(bot.entity.position.y - peer.entity.position.y) > LEVEL_GAP) {
    await goto(bot, peer.entity.position, 2, { level: true })
  }
  await bot.lookAt(peer.entity.position.offset(0, 0.2, 0), true)
  await bot.waitForTicks(2) // the rotation reaches the server on the next tick
  // What reached the receiver from this hand-over's own throws, as the server credits each pickup;
  // the receiver's count would also count other deliveries of the item landing at once.
  const handover = await ctx.handTo(bot.username, action.to)
  const got = handover === null ? async () => countOf(peer, action.item) - before : () => ctx.delivered(handover)
  const received = async () => (await got()) >= action.count
  await bot.toss(itemId(bot, action.item), null, action.count)
  // A handoff is confirmed by the receiver's inventory, never assumed from the toss. A stack
  // that lands out of the receiver's reach (it was still walking when the giver aimed, the
  // server had the giver's old heading, or it walked off during the pickup delay) is owed to
  // it: the receiver walks onto it before its next action, or at once when it is idle.
  // Where the stack lies is the server's word for this hand-over's own throw when it has one
  // (several stacks of one item can lie round a receiver fed by a crowd).
  const where = handover === null
    ? async () => nearestStack(bot, peer, action.item, TOSS_CARRY + 1)?.position ?? null
    : async () => { const at = await ctx.stackOf(handover); return at && new Vec3(at.x, at.y, at.z) }
  const stack = await landed(bot, peer, action.item)
  if ((stack && !withinPickup(peer.entity.position, stack.position)) || !(await settles(received, TOSS_PICKUP_MS + TOSS_GRACE_MS))) {
    oweStack(ctx, peer.username, where)
  }
  let arrived = 0
  let goneSince = null // no stack of it on the ground, and not (yet) credited to the receiver
  const failure = () => Object.assign(
    new SkillFailure('HANDOFF_NOT_RECEIVED',
      `${action.to} received ${Math.max(0, arrived)} of ${action.count} ${action.item}; ${whereLeft(bot, peer, action.item)}`),
    { delivered: handover === null ? undefined : arrived })
  await waitFor(async () => {
    if ((arrived = await got()) >= action.count) return true
    // what was thrown to the giver itself meanwhile: a team that hands blocks round at the start
    // (A to B, B to C, C to A) has each giver busy waiting on a receiver that is busy waiting in turn
    await collectStacks(ctx, bot).catch(() => {})
    if (!ctx.acting.has(action.to)) await collectStacks(ctx, peer, true)
    if ((arrived = await got()) >= action.count) return true
    if ((await where()) !== null) goneSince = null
    else if (Date.now() - (goneSince ??= Date.now()) > STACK_SEEN_MS) throw failure() // lost, or somebody else has it
    return false
  }, RECEIVER_FREE_MS + HANDOFF_TIMEOUT_MS, failure)
  return { delivered: handover === null ? undefined : arrived }
}

// What a failed hand-over left on the ground, for the record: the one thing its reader needs.
function whereLeft (giver, receiver, item) {
  const stack = nearestStack(giver, receiver, item, Infinity)
  if (!stack) return 'no stack of it lies on the ground: somebody else picked it up'
  return `a stack of it lies ${flatGap(stack.position, receiver.entity.position).toFixed(1)} blocks from ${receiver.username}`
}

// The stack of this item nearest the giver, within `range` of it, as the receiver sees the world.
function nearestStack (giver, receiver, item, range) {
  const from = giver.entity.position
  return Object.values(receiver.entities)
    .filter((e) => e.name === 'item' && e.getDroppedItem()?.name === item && e.position.distanceTo(from) <= range)
    .sort((a, b) => a.position.distanceTo(from) - b.position.distanceTo(from))[0]
}

const flatGap = (a, b) => Math.hypot(a.x - b.x, a.z - b.z)

async function settles (predicate, timeoutMs) {
  try {
    await waitFor(predicate, timeoutMs, () => new Error('not yet'))
    return true
  } catch {
    return false
  }
}

// The thrown stack as the receiver sees it: the nearest of its kind to the giver, once it
// has appeared (null when none has within a second: somebody else has it, or it is picked up).
async function landed (giver, receiver, item) {
  const find = () => nearestStack(giver, receiver, item, TOSS_CARRY + 1)
  return (await settles(() => find() !== undefined, STACK_SEEN_MS)) ? find() : null
}

// A stack thrown to `name` that it has yet to walk onto; `where` finds it (null once gone).
function oweStack (ctx, name, where) {
  ctx.owedStacks.set(name, [...(ctx.owedStacks.get(name) ?? []), where])
}

// The receiver walks onto every stack owed to it, then waits out the pickup. The bridge calls
// this before each of the receiver's actions; a giver calls it (`onlyIdle`) when the receiver
// has nothing to do. One walk at a time per receiver: the other caller waits for it.
// A bot that walked off to pick up a stack thrown short of it comes back to where its action
// is done (the station, the source, the chest), as a player would, before it acts there.
async function backInReach (ctx, bot, action) {
  const name = action.station ?? action.source ?? action.container
  const ref = name ? ctx.layout.refs[name] : null
  if (!ref) return
  const [x, y, z] = ref.position
  if (bot.entity.position.distanceTo(new Vec3(x + 0.5, y, z + 0.5)) > REACH) await goto(bot, { x, y, z }, REF_RANGE)
}

async function collectStacks (ctx, receiver, onlyIdle = false) {
  const name = receiver.username
  while (ctx.fetching.has(name)) await ctx.fetching.get(name)
  const owed = ctx.owedStacks.get(name)
  if (!owed || (onlyIdle && ctx.acting.has(name))) return
  ctx.owedStacks.delete(name)
  const walk = (async () => {
    for (const [index, where] of owed.entries()) {
      try {
        const at = await where()
        if (!at) continue // picked up already
        if (!withinPickup(receiver.entity.position, at)) await goto(receiver, at, 1, { straight: true })
        // still lying there (the walk ended beside it, a level off): owed again, for the next call to retry
        if (!(await settles(async () => (await where()) === null, TOSS_PICKUP_MS + TOSS_GRACE_MS))) oweStack(ctx, name, where)
      } catch (err) {
        for (const left of owed.slice(index)) oweStack(ctx, name, left) // a walk that failed is tried again later
        throw err
      }
    }
  })()
  ctx.fetching.set(name, walk.catch(() => {}))
  try {
    await walk
  } finally {
    ctx.fetching.delete(name)
  }
}

async function openChest (ctx, bot, name) {
  const ref = ctx.layout.refs[name]
  await reachRef(bot, ref, name)
  const block = blockAt(bot, ref.position)
  if (!block.name.includes('chest')) throw new SkillFailure('NO_CONTAINER', `${name} is ${block.name}, not a chest`)
  return bot.openContainer(block)
}

function windowCounts (window) {
  const counts = {}
  for (const item of window.containerItems()) counts[item.name] = (counts[item.name] ?? 0) + item.count
  return counts
}

async function deposit (ctx, bot, action) {
  need(bot, action.item, action.count)
  const window = await openChest(ctx, bot, action.container)
  try {
    const stackSize = bot.registry.itemsByName[action.item].stackSize
    const free = (window.inventoryStart - window.containerItems().length) * stackSize +
      window.containerItems().filter((i) => i.name === action.item).reduce((n, i) => n + stackSize - i.count, 0)
    if (free < action.count) throw new SkillFailure('NO_SPACE', `${action.container} has no free slot for ${action.count} ${action.item}`)
    await window.deposit(itemId(bot, action.item), null, action.count)
    ctx.seen[action.container] = windowCounts(window)
  } finally {
    bot.closeWindow(window)
  }
}

async function withdraw (ctx, bot, action) {
  const window = await openChest(ctx, bot, action.container)
  try {
    const have = windowCounts(window)[action.item] ?? 0
    if (have < action.count) throw new SkillFailure('MISSING_ITEMS', `${action.container} has ${have} ${action.item}, needs ${action.count}`)
    await window.withdraw(itemId(bot, action.item), null, action.count)
    ctx.seen[action.container] = windowCounts(window)
  } finally {
    bot.closeWindow(window)
  }
}

function ingredientsOf (recipe) {
  const needs = {}
  for (const { id, count } of recipe.delta) if (count < 0) needs[id] = (needs[id] ?? 0) - count
  return needs
}

async function craftItem (ctx, bot, action) {
  const Recipe = require('prismarine-recipe')(bot.registry).Recipe
  const item = bot.registry.itemsByName[action.item]
  const material = action.material ? bot.registry.itemsByName[action.material] : null
  const recipes = item ? Recipe.find(item.id, null).filter((r) => !material || ingredientsOf(r)[material.id]) : []
  if (recipes.length === 0) {
    const source = action.material ? ` from ${action.material}` : ''
    throw new SkillFailure('NO_RECIPE', `no recipe makes ${action.item}${source}`)
  }
  let table = null
  if (action.station === null) {
    if (recipes.every((r) => r.requiresTable)) throw new SkillFailure('NEEDS_STATION', `${action.item} needs a 3x3 grid: craft it at a crafting_table`)
  } else {
    const ref = ctx.layout.refs[action.station]
    if (ref.block !== 'crafting_table') throw new SkillFailure('WRONG_STATION', `${action.station} is not a crafting_table`)
    await reachRef(bot, ref, action.station)
    table = blockAt(bot, ref.position)
    if (table.name !== 'crafting_table') throw new SkillFailure('STATION_NOT_PLACED', `no crafting_table has been placed at ${action.station} yet`)
    if (ctx.mayBeBusy.has(action.station)) await stationFree(bot, table, action.station)
  }
  const usable = recipes.filter((r) => table || !r.requiresTable)
  const shortfall = (recipe) => Object.entries(ingredientsOf(recipe))
    .map(([id, n]) => [bot.registry.items[id].name, n * action.runs - countOf(bot, bot.registry.items[id].name)])
    .filter(([, short]) => short > 0)
  const recipe = usable.find((r) => shortfall(r).length === 0)
  if (!recipe) {
    const missing = shortfall(usable[0]).sort(([a], [b]) => a.localeCompare(b)).map(([name, n]) => `${n} ${name}`)
    throw new SkillFailure('MISSING_INGREDIENT', `missing ingredient: ${missing.join(', ')}`)
  }
  const before = countOf(bot, action.item)
  const made = recipe.result.count * action.runs
  // One run at a time, each from the server's own record of the bag: mineflayer models its
  // clicks and stacks just picked up ahead of the server, and a model that drifted during a
  // multi-run craft put ingredients where the server had none ("missing ingredient" mid-craft).
  for (let run = 0; run < action.runs; run++) {
    await syncBag(bot)
    try {
      await bot.craft(recipe, 1, table ?? undefined)
    } catch (err) {
      // A table's window whose contents had not reached the client when mineflayer began to
      // click it (seen late in long runs on a loaded server): nothing was crafted and the
      // closed window put the grid back, so the run is tried once more from a resynced bag.
      if (!table || !/missing ingredient/.test(err.message)) throw err
      await syncBag(bot)
      if (shortfall(recipe).length > 0) throw err
      await bot.craft(recipe, 1, table)
    }
  }
  await syncBag(bot)
  await waitFor(() => countOf(bot, action.item) >= before + made, 2000,
    () => new SkillFailure('CRAFT_FAILED', `${bot.username} crafted ${countOf(bot, action.item) - before} of ${made} ${action.item}`))
}

// The client's model of its bag made the server's: a resync click, answered with the whole window.
async function syncBag (bot) {
  await Promise.race([bot._syncWindow(bot.inventory), sleep(SYNC_MS)])
}

// The server answers a taken station with a chat line instead of a window: try it first.
async function stationFree (bot, table, name) {
  let busyFor = null
  const heard = (text) => { const m = /^gencoord:busy ([\d.]+)/.exec(text); if (m) busyFor = parseFloat(m[1]) }
  bot.on('messagestr', heard)
  try {
    const opened = new Promise((resolve) => bot.once('windowOpen', resolve))
    await bot.activateBlock(table)
    await Promise.race([opened, waitFor(() => busyFor !== null, 3000, () => new SkillFailure('STATION_SILENT', `${name} neither opened nor said it is taken`))])
    if (busyFor !== null) throw new SkillFailure('STATION_BUSY', `${name} is busy for another ${busyFor.toFixed(1)} s`, busyFor)
    if (bot.currentWindow) bot.closeWindow(bot.currentWindow)
  } finally {
    bot.off('messagestr', heard)
  }
}

async function placeBlock (ctx, bot, action) {
  const ref = ctx.layout.refs[action.site]
  withinReach(bot, ref.position, action.site)
  need(bot, action.item, 1)
  const cells = ctx.layout.sites[action.site]
  const feet = bot.entity.position.floored()
  const free = cells
    .filter((pos) => blockAt(bot, pos).name === 'air' && !(pos[0] === feet.x && pos[2] === feet.z))
    .sort((a, b) => refCenter(a).distanceTo(bot.entity.position) - refCenter(b).distanceTo(bot.entity.position))
  if (free.length === 0) throw new SkillFailure('SITE_FULL', `${action.site} has no free cell`)
  const cell = free[0]
  if (refCenter(cell).distanceTo(bot.entity.position.offset(0, 1.6, 0)) > REACH) {
    await goto(bot, { x: cell[0] + 0.5, y: cell[1], z: cell[2] + 0.5 }, 2)
  }
  const ground = blockAt(bot, [cell[0], cell[1] - 1, cell[2]])
  await bot.equip(itemId(bot, action.item), 'hand')
  await bot.placeBlock(ground, new Vec3(0, 1, 0))
}

// ------------------------------------------------------------------ building at exact cells
// The rule the simulator applies (worlds/placing.py): a block needs a face to go against, the
// one below first; a carpet, door, torch ... stands only on a block below; a door fills its cell
// and the one above. flying-squid checks neither reach nor support, so the skill does.
const FLOOR_SUFFIXES = ['_carpet', '_door', '_pressure_plate', '_sapling', '_rail', '_bed', '_banner']
const FLOOR_NAMES = new Set(['torch', 'soul_torch', 'redstone_torch', 'rail', 'snow', 'carpet', 'moss_carpet'])
const needsFloor = (name) => FLOOR_NAMES.has(name) || FLOOR_SUFFIXES.some((suffix) => name.endsWith(suffix))
const twoHigh = (name) => name.endsWith('_door')
const FACES = [new Vec3(0, -1, 0), new Vec3(0, 1, 0), new Vec3(1, 0, 0), new Vec3(-1, 0, 0), new Vec3(0, 0, 1), new Vec3(0, 0, -1)]
const PLACE_REACH = 4.5 // vanilla's block interaction range, from the eyes
const STAND_REACH = 4.0 // where a builder stops: the cell's centre this far from its eyes at most
// A bot stands anywhere on its block, up to its edge, so its eyes can be 0.7 off the block's
// middle the stand was chosen by: one found out of reach steps to a stand this close instead.
const CLOSE_REACH = 3.5
const STAND_TRIES = 3
// waits between tries to get within reach: a teammate's floor the walk needs, on the real clock a
// little later than in the plan, is there within these (20 s in all)
const STAND_PATIENCE_MS = [500, 1500, 4000, 6000, 8000]
const STAND_PATIENCE_LIMIT_MS = 45000 // path searches included: well inside the executor's 90 s for one action
const STAND_WAIT_TICKS = 10 // a teammate crossing the stand is off it within half a second
const OCCUPIED_MS = 15000 // a teammate standing in the cell steps aside at the start of its next action, or at once when idle
const PLACED_MS = 2000
const PILLAR_TRIES = 6 // a jump whose block the server refused (it still heard the feet in the cell, under load) is tried again
const PILLAR_PLACED_MS = 600 // a placed block's update reaches the client within a tick or two

// Where a builder may stand to place at `cell`: its eyes within reach of the cell's centre, and
// its body (feet and head) out of every cell a block of the blueprint is still to fill, so no
// builder stands where a teammate's block goes next.
class StandToPlace extends goals.Goal {
  constructor (cells, keep, reach = STAND_REACH) {
    super()
    this.cells = cells
    this.keep = keep
    this.reach = reach
    this.centre = cells[0].offset(0.5, 0.5, 0.5)
  }

  heuristic (node) {
    return Math.max(0, new Vec3(node.x + 0.5, node.y + EYE_HEIGHT, node.z + 0.5).distanceTo(this.centre) - this.reach)
  }

  isEnd (node) {
    const inside = this.cells.some((c) => c.x === node.x && c.z === node.z && (c.y === node.y || c.y === node.y + 1))
    const inTheWay = this.keep.has(cellKey(node)) || this.keep.has(cellKey({ x: node.x, y: node.y + 1, z: node.z }))
    return !inside && !inTheWay && new Vec3(node.x + 0.5, node.y + EYE_HEIGHT, node.z + 0.5).distanceTo(this.centre) <= this.reach
  }
}

// Within reach of `cells`, stepping closer when the bot stands at its block's edge, out of reach
// of what the stand's middle reaches: a stand the simulator chose by the middle of its block.
async function closeEnough (bot, cells, keep) {
  const centre = cells[0].offset(0.5, 0.5, 0.5)
  if (withinPlaceReach(bot, centre)) return
  const close = new StandToPlace(cells, keep, CLOSE_REACH)
  await goto(bot, centre, CLOSE_REACH, { stand: close }).catch(() => {})
}

function solid (block) {
  return block && block.boundingBox === 'block'
}

function faceFor (bot, cell, name) {
  const faces = needsFloor(name) ? FACES.slice(0, 1) : FACES
  for (const face of faces) {
    const against = bot.blockAt(cell.plus(face))
    if (solid(against)) return { against, vector: face.scaled(-1) }
  }
  return null
}

// A goal for a builder standing where a teammate must place: any spot off the cells wanted.
class StandAside extends goals.Goal {
  constructor (wanted) {
    super()
    this.wanted = wanted
  }

  heuristic () {
    return 0
  }

  isEnd (node) {
    return !this.wanted.has(cellKey(node)) && !this.wanted.has(cellKey({ x: node.x, y: node.y + 1, z: node.z }))
  }
}

async function standAside (bot, wanted) {
  const aside = new StandAside(wanted)
  if (aside.isEnd(bot.entity.position.floored())) return
  await goto(bot, bot.entity.position, 0, { stand: aside })
}

function occupant (ctx, cells) {
  for (const [name, other] of Object.entries(ctx.bots)) {
    const feet = other.entity?.position?.floored()
    if (feet && cells.some((c) => c.x === feet.x && c.z === feet.z && (c.y === feet.y || c.y === feet.y + 1))) return name
  }
  return null
}

async function placeAt (ctx, bot, action) {
  const build = ctx.layout.builds?.[action.site]
  if (!build) throw new SkillFailure('NOT_A_BUILD_SITE', `${action.site} is a site without exact cells`)
  const [x, y, z] = action.cell
  const where = action.cell.join(',')
  const size = build.size
  const cells = [new Vec3(build.origin[0] + x, build.origin[1] + y, build.origin[2] + z)]
  if (twoHigh(action.block)) cells.push(cells[0].offset(0, 1, 0))
  if (cells.some((c) => c.x - build.origin[0] >= size[0] || c.y - build.origin[1] >= size[1] || c.z - build.origin[2] >= size[2] ||
      c.x < build.origin[0] || c.y < build.origin[1] || c.z < build.origin[2])) {
    throw new SkillFailure('OUTSIDE_SITE', `cell ${where} is outside ${action.site}`)
  }
  const taken = cells.map((c) => blockAt(bot, [c.x, c.y, c.z])).find((b) => b.name !== 'air')
  if (taken) throw new SkillFailure('CELL_TAKEN', `${taken.name} already stands at ${action.site} cell ${where}`)
  // a teammate's block under this one was placed a moment ago: its update reaches this client within a tick or two
  let face = faceFor(bot, cells[0], action.block)
  if (!face) {
    await settles(() => faceFor(bot, cells[0], action.block) !== null, 1000)
    face = faceFor(bot, cells[0], action.block)
  }
  if (!face) throw new SkillFailure('NO_SUPPORT', `${action.block} at ${action.site} cell ${where} has no face to go against`)
  need(bot, action.block, 1)
  // off the cells still to fill on this level and below (standing on this level's blocks, where the next
  // level goes, is how a builder reaches the middle of a wide slab), and off cells a teammate waits for
  const keep = new Set((build.filled ?? [])
    .filter(([, fy]) => fy <= y)
    .map(([fx, fy, fz]) => new Vec3(build.origin[0] + fx, build.origin[1] + fy, build.origin[2] + fz))
    .filter((c) => bot.blockAt(c)?.name === 'air')
    .map(cellKey))
  for (const wanted of ctx.wanted.keys()) keep.add(wanted)
  const stand = new StandToPlace(cells, keep)
  let missed = await standPlanned(bot, build, action.stand)
  // off its stand, or the way there not open yet: on the real clock rather than the plan's, a
  // teammate walks through, or a teammate's block the walk steps on is still to come. Back onto
  // the planned stand, else to any stand within reach, else it waits a little longer each time.
  const giveUp = Date.now() + STAND_PATIENCE_LIMIT_MS
  for (let tries = 0; !withinPlaceReach(bot, stand.centre); tries++) {
    if (!stand.isEnd(bot.entity.position.floored())) {
      const lost = await goto(bot, stand.centre, STAND_REACH, { stand }).then(() => '', (err) => err.message)
      if (lost) missed += ` (no other stand within reach: ${lost})`
    }
    await closeEnough(bot, cells, keep)
    if (withinPlaceReach(bot, stand.centre) || tries >= STAND_PATIENCE_MS.length || Date.now() > giveUp) break
    await sleep(STAND_PATIENCE_MS[tries])
    missed = await standPlanned(bot, build, action.stand)
  }
  const gap = standingEyes(bot).distanceTo(stand.centre)
  if (gap > PLACE_REACH) {
    const at = bot.entity.position.floored().minus(new Vec3(...build.origin))
    const code = /no path/i.test(missed) ? 'NO_PATH' : 'OUT_OF_REACH'
    throw new SkillFailure(code, `${bot.username} at ${at.x},${at.y},${at.z} is ${gap.toFixed(1)} blocks from ${action.site} cell ${where} (reach ${PLACE_REACH})${missed}`)
  }
  if (occupant(ctx, cells)) {
    const keys = cells.map(cellKey)
    for (const key of keys) ctx.wanted.set(key, bot.username)
    try {
      const standing = occupant(ctx, cells)
      if (!ctx.acting.has(standing)) await standAside(ctx.bots[standing], ctx.wanted).catch(() => {})
      await settles(() => occupant(ctx, cells) === null, OCCUPIED_MS)
    } finally {
      for (const key of keys) ctx.wanted.delete(key)
    }
  }
  const inTheWay = occupant(ctx, cells)
  if (inTheWay) throw new SkillFailure('CELL_OCCUPIED', `${inTheWay} stands in ${action.site} cell ${where}`)
  await bot.equip(itemId(bot, action.block), 'hand')
  try {
    await bot.placeBlock(face.against, face.vector)
  } catch (err) {
    // mineflayer gives up when the update is slow; the server's block is what counts
    if (!/blockUpdate|still air|timeout|Event/i.test(err.message)) throw err
  }
  await waitFor(() => blockAt(bot, [cells[0].x, cells[0].y, cells[0].z]).name === action.block, PLACED_MS,
    () => new SkillFailure('PLACE_FAILED', `${action.site} cell ${where} shows ${blockAt(bot, [cells[0].x, cells[0].y, cells[0].z]).name} after placing ${action.block}`))
}

// The stand the compiler planned (runtime/stands.py): the bot walks onto that very block
// (feet cell, site offsets). A stand it cannot reach is not an error here: the skill then
// finds the nearest stand itself, as it does when none was planned.
async function standPlanned (bot, build, feet) {
  if (!feet) return ''
  const target = new Vec3(build.origin[0] + feet[0], build.origin[1] + feet[1], build.origin[2] + feet[2])
  const there = () => bot.entity.position.floored().equals(target)
  // a walk ends the moment the bot is in the cell, and a bot crossing it at a run (or a jump) can
  // carry on out of it before it lands: it walks back
  let missed = ''
  for (let tries = 0; tries < STAND_TRIES && !there(); tries++) {
    const goal = new goals.GoalBlock(target.x, target.y, target.z)
    missed = await goto(bot, target.offset(0.5, 0, 0.5), 0.5, { stand: goal }).then(() => '', (err) => err.message)
    if (missed) break
  }
  if (!there()) {
    const at = bot.entity.position.floored().minus(new Vec3(...build.origin))
    return ` (its planned stand ${feet.join(',')} not reached from ${at.x},${at.y},${at.z}${missed ? ': ' + missed : ''})`
  }
  await centre(bot)
  return ''
}

// The simulator stands a builder in the middle of its block; a real bot stops anywhere on it, up
// to its edge: 0.7 off in reach, and under a ledge beside it, where a tower's jump hits its head.
// Sneaking (which keeps a bot from stepping off an edge) it walks to the middle.
const CENTRED = 0.15
const CENTRING_MS = 1500
async function centre (bot) {
  const middle = bot.entity.position.floored().offset(0.5, 0, 0.5)
  const off = () => Math.hypot(bot.entity.position.x - middle.x, bot.entity.position.z - middle.z)
  if (off() <= CENTRED) return
  const deadline = Date.now() + CENTRING_MS
  bot.setControlState('sneak', true)
  try {
    while (off() > CENTRED && Date.now() < deadline) {
      await bot.lookAt(middle.offset(0, EYE_HEIGHT, 0), true)
      bot.setControlState('forward', true)
      await bot.waitForTicks(1)
      bot.setControlState('forward', false)
    }
  } finally {
    bot.clearControlStates()
  }
}

// Reach as the simulator measures it, from the eyes over the middle of the block the bot stands
// on: a bot off the middle (it stops anywhere on its block) leans in as a player would. Vanilla's
// server accepts a click up to a block past the client's 4.5 anyway.
function standingEyes (bot) {
  const { x, y, z } = bot.entity.position
  return new Vec3(Math.floor(x) + 0.5, y + EYE_HEIGHT, Math.floor(z) + 0.5)
}

function withinPlaceReach (bot, centre) {
  return standingEyes(bot).distanceTo(centre) <= PLACE_REACH
}

function siteCell (ctx, action, cell) {
  const build = ctx.layout.builds?.[action.site]
  if (!build) throw new SkillFailure('NOT_A_BUILD_SITE', `${action.site} is a site without exact cells`)
  return { build, pos: new Vec3(build.origin[0] + cell[0], build.origin[1] + cell[1], build.origin[2] + cell[2]) }
}

// Scaffolding comes down: the block must be the one placed there; its drop falls where it stood.
async function breakAt (ctx, bot, action) {
  const { build, pos } = siteCell(ctx, action, action.cell)
  const where = action.cell.join(',')
  const found = blockAt(bot, [pos.x, pos.y, pos.z])
  if (found.name !== action.block) throw new SkillFailure('NOTHING_TO_BREAK', `${action.site} cell ${where} holds ${found.name}, not ${action.block}`)
  await standPlanned(bot, build, action.stand)
  const centre = pos.offset(0.5, 0.5, 0.5)
  if (!withinPlaceReach(bot, centre)) {
    await goto(bot, centre, STAND_REACH, { stand: new StandToPlace([pos], new Set()) })
  }
  await closeEnough(bot, [pos], new Set())
  if (!withinPlaceReach(bot, centre)) throw new SkillFailure('OUT_OF_REACH', `${bot.username} is ${standingEyes(bot).distanceTo(centre).toFixed(1)} blocks from ${action.site} cell ${where} (reach ${PLACE_REACH})`)
  await bot.dig(found, true)
  await waitFor(() => blockAt(bot, [pos.x, pos.y, pos.z]).name === 'air', PLACED_MS,
    () => new SkillFailure('BREAK_FAILED', `${action.site} cell ${where} still holds ${action.block} after breaking it`))
}

// One step up a tower: stand in the cell, jump, and place the block under the feet at the top
// of the jump. The server refuses a block in the cell it last heard the player's feet in, so
// the block goes once a position above the cell has been sent (a tick after the client is
// there); a jump that lands before the block does is tried again.
async function pillar (ctx, bot, action) {
  const { build, pos } = siteCell(ctx, action, action.cell)
  const where = action.cell.join(',')
  need(bot, action.block, 1)
  let missed = await standPlanned(bot, build, action.cell)
  for (let tries = 0; tries < STAND_TRIES && !bot.entity.position.floored().equals(pos); tries++) {
    await bot.waitForTicks(STAND_WAIT_TICKS) // a teammate crossing the column is off it within half a second
    missed = await standPlanned(bot, build, action.cell)
  }
  if (!bot.entity.position.floored().equals(pos)) throw new SkillFailure('NO_STAND', `${bot.username} cannot stand at ${action.site} cell ${where} to pillar up${missed}`)
  const below = blockAt(bot, [pos.x, pos.y - 1, pos.z])
  if (!solid(below)) throw new SkillFailure('NO_SUPPORT', `nothing under ${action.site} cell ${where} to pillar up from`)
  await bot.equip(itemId(bot, action.block), 'hand')
  const placed = () => blockAt(bot, [pos.x, pos.y, pos.z]).name === action.block
  for (let attempt = 0; attempt < PILLAR_TRIES && !placed(); attempt++) {
    await settles(() => bot.entity.onGround, LANDING_MS)
    await bot.look(bot.entity.yaw, -Math.PI / 2, true)
    bot.setControlState('jump', true)
    try {
      await settles(() => bot.entity.position.y >= pos.y + 1.05, PLACED_MS)
      await bot.waitForTicks(1)
      bot.placeBlock(below, new Vec3(0, 1, 0)).catch(() => {}) // the server's block is what counts, read below
      await settles(placed, PILLAR_PLACED_MS)
    } finally {
      bot.setControlState('jump', false)
    }
  }
  if (!placed()) throw new SkillFailure('PLACE_FAILED', `${action.site} cell ${where} shows ${blockAt(bot, [pos.x, pos.y, pos.z]).name} after pillaring`)
  await settles(() => bot.entity.onGround && bot.entity.position.y >= pos.y + 0.99, LANDING_MS)
}

// Down one step of a tower: break the block under the feet and drop onto what is below, the drop with it.
async function digDown (ctx, bot, action) {
  const { pos } = siteCell(ctx, action, action.cell)
  const where = action.cell.join(',')
  const feet = bot.entity.position.floored()
  if (!feet.equals(pos.offset(0, 1, 0))) throw new SkillFailure('NO_STAND', `${bot.username} is not standing on ${action.site} cell ${where}`)
  const block = blockAt(bot, [pos.x, pos.y, pos.z])
  if (block.name !== action.block) throw new SkillFailure('NOTHING_TO_BREAK', `${action.site} cell ${where} holds no ${action.block}`)
  await bot.dig(block, true)
  await waitFor(() => blockAt(bot, [pos.x, pos.y, pos.z]).name === 'air', PLACED_MS,
    () => new SkillFailure('BREAK_FAILED', `${action.site} cell ${where} still holds ${action.block} after digging down`))
  await settles(() => bot.entity.onGround && bot.entity.position.y < pos.y + 0.5, LANDING_MS)
}

// Out of a teammate's way, onto the cell the plan names.
async function stepAside (ctx, bot, action) {
  const { build } = siteCell(ctx, action, action.feet)
  await standPlanned(bot, build, action.feet)
}

async function placeStation (ctx, bot, action) {
  const ref = ctx.layout.refs[action.station]
  if (ref.block !== action.item) throw new SkillFailure('WRONG_STATION', `${action.station} takes a ${ref.block}, not ${action.item}`)
  await reachRef(bot, ref, action.station)
  if (blockAt(bot, ref.position).name !== 'air') throw new SkillFailure('STATION_OCCUPIED', `a ${blockAt(bot, ref.position).name} already stands at ${action.station}`)
  need(bot, action.item, 1)
  const ground = blockAt(bot, [ref.position[0], ref.position[1] - 1, ref.position[2]])
  await bot.equip(itemId(bot, action.item), 'hand')
  const standing = () => blockAt(bot, ref.position).name === action.item
  // the server's answer to a placement can be lost under load ("Server did not answer the
  // placement"): the block is looked for, and the placement made again while it is not there
  for (let tries = 1; !standing(); tries++) {
    try {
      await bot.placeBlock(ground, new Vec3(0, 1, 0))
    } catch (err) {
      if (tries >= STATION_PLACE_TRIES || !/did not answer|timeout|timed out/i.test(err.message)) throw err
    }
    if (await settles(standing, 2000)) break
    if (tries >= STATION_PLACE_TRIES) throw new SkillFailure('PLACE_FAILED', `${action.station} shows ${blockAt(bot, ref.position).name} after placing`)
  }
}

// ------------------------------------------------------------------ furnaces
async function openFurnaceAt (ctx, bot, name) {
  const ref = ctx.layout.refs[name]
  if (ref.block !== 'furnace' && ref.block !== 'smoker') throw new SkillFailure('WRONG_STATION', `${name} is not a furnace or a smoker`)
  await reachRef(bot, ref, name)
  const block = blockAt(bot, ref.position)
  if (block.name !== ref.block) throw new SkillFailure('STATION_NOT_PLACED', `no ${ref.block} stands at ${name}`)
  return bot.openFurnace(block)
}

// A smoker cooks food only, in half a furnace's time, and burns its fuel twice as fast.
function stationRules (ctx, name) {
  const rules = ctx.furnace
  const smoker = ctx.layout.refs[name]?.block === 'smoker'
  const scale = smoker ? rules.ticksPerSmoke / rules.ticksPerItem : 1
  return { recipes: smoker ? rules.smoking : rules.smelting, perItem: smoker ? rules.ticksPerSmoke : rules.ticksPerItem, burn: (item) => Math.floor((rules.fuel[item] ?? 0) * scale) }
}

// The station's window once `ready` holds of it, looked at again every second for up to
// STATION_WAIT_MS (another bot's batch in it is taken out by that bot); then `refused` of what it shows.
async function servedBy (ctx, bot, name, ready, refused) {
  const until = Date.now() + STATION_WAIT_MS
  for (;;) {
    const furnace = await openFurnaceAt(ctx, bot, name)
    if (ready(furnace)) return furnace
    const failure = refused(furnace)
    bot.closeWindow(furnace)
    if (Date.now() > until) throw failure
    await sleep(1000)
  }
}

async function furnaceLoad (ctx, bot, action) {
  const rules = ctx.furnace
  const station = stationRules(ctx, action.station)
  if (action.slot === 'input' && !(action.item in station.recipes)) throw new SkillFailure('NOT_SMELTABLE', `${action.item} does not cook or smelt at ${action.station}`)
  if (action.slot === 'fuel' && !(action.item in rules.fuel)) throw new SkillFailure('NOT_FUEL', `${action.item} is not a furnace fuel`)
  // a teammate's batch still cooking in the input: wait for it to clear, as a player would, rather
  // than fail at once (the worlds' clocks differ by a little). A teammate's output waiting to be
  // taken does not stop a load: the station cooks it once the output is taken, as vanilla's does.
  const clear = (f) => action.slot !== 'input' || !f.inputItem() || f.inputItem().name === action.item
  const furnace = await servedBy(ctx, bot, action.station, clear,
    (f) => new SkillFailure('SLOT_OCCUPIED', `${action.station}'s input holds ${f.inputItem()?.name}`))
  try {
    need(bot, action.item, action.count)
    const id = itemId(bot, action.item)
    if (action.slot === 'input') await furnace.putInput(id, null, action.count)
    else await furnace.putFuel(id, null, action.count)
  } finally {
    bot.closeWindow(furnace)
  }
}

async function furnaceCollect (ctx, bot, action) {
  const rules = stationRules(ctx, action.station)
  const ours = (f) => !f.outputItem() || f.outputItem().name === action.item // a teammate's output is taken first
  const furnace = await servedBy(ctx, bot, action.station, ours,
    (f) => new SkillFailure('WRONG_OUTPUT', `${action.station} makes ${f.outputItem()?.name}, not ${action.item}`))
  let before = 0
  try {
    await waitFor(() => furnace.totalProgress !== null, 2000, () => new SkillFailure('FURNACE_SILENT', `${action.station} sent no progress`))
    const made = () => (furnace.outputItem()?.count ?? 0)
    const short = action.count - made()
    if (short > 0) {
      const fuel = furnace.fuelItem()
      const fuelTicks = (furnace.fuel ?? 0) * (furnace.totalFuel ?? 0) + (fuel ? rules.burn(fuel.name) * fuel.count : 0)
      const possible = Math.min(furnace.inputItem()?.count ?? 0, Math.floor(fuelTicks / rules.perItem))
      if (possible < short) throw new SkillFailure('FURNACE_SHORT', `${action.station} can make ${made() + possible} ${action.item}, ${action.count} requested`)
      const waitMs = (short * rules.perItem / 20 + 3) * 1000
      await waitFor(() => made() >= action.count, waitMs, () => new SkillFailure('FURNACE_SHORT', `${action.station} made ${made()} of ${action.count} ${action.item}`))
    }
    const output = furnace.outputItem()
    if (output.name !== action.item) throw new SkillFailure('WRONG_OUTPUT', `${action.station} makes ${output.name}, not ${action.item}`)
    before = countOf(bot, action.item)
    await furnace.takeOutput()
  } finally {
    bot.closeWindow(furnace)
  }
  // the inventory shows what the window moved once the window is closed
  await waitFor(() => countOf(bot, action.item) >= before + action.count, 2000,
    () => new SkillFailure('COLLECT_FAILED', `${bot.username} took ${countOf(bot, action.item) - before} of ${action.count} ${action.item}`))
}

async function wait (ctx, bot, action) {
  await bot.waitForTicks(action.ticks)
}

const SKILLS = {
  go_to: goTo,
  obtain_block: obtainBlock,
  hunt,
  give_item: giveItem,
  deposit,
  withdraw,
  craft_item: craftItem,
  place_block: placeBlock,
  place_at: placeAt,
  break_at: breakAt,
  pillar,
  dig_down: digDown,
  step_aside: stepAside,
  place_station: placeStation,
  furnace_load: furnaceLoad,
  furnace_collect: furnaceCollect,
  wait
}

module.exports = { SKILLS, SkillFailure, backInReach, collectOwed, collectStacks, forgetOwed, inventoryOf, sleep }
