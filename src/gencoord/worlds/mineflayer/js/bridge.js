'use strict'
// The Node side of the Python bridge: one JSON request per stdin line, one JSON answer
// per stdout line ({id, ok, result} or {id, ok: false, error: {code, message}}).
// stdout carries nothing else; logs go to stderr. It owns the bots and, in embedded
// mode, the server, and ends them all when stdin closes.

const readline = require('readline')
const path = require('path')
const { fork } = require('child_process')

// stdout is the protocol: whatever a library prints goes to stderr instead.
const protocolWrite = process.stdout.write.bind(process.stdout)
process.stdout.write = (chunk, ...rest) => process.stderr.write(chunk, ...rest)
console.log = console.info = console.warn = (...parts) => process.stderr.write(parts.join(' ') + '\n')

const mineflayer = require('mineflayer')
const { pathfinder, Movements } = require('mineflayer-pathfinder')
const { Vec3 } = require('vec3')
const { memoryReading } = require('./memory')
const { addRecipes } = require('./recipes')
const { SKILLS, SkillFailure, backInReach, collectOwed, collectStacks, forgetOwed, inventoryOf, sleep } = require('./skills')

const LOGIN_TIMEOUT_MS = 20000
const MAX_DROP = 4 // feet to feet, as worlds/standing.py walks
const THINK_TIMEOUT_MS = 15000 // a path search, all bots of a team sharing the thread
const SETUP_TIMEOUT_MS = 15000
const SERVER_TIMEOUT_MS = 20000

const state = { herds: new Map(), hunted: new Set(), serv: null, bots: {}, dead: {}, layout: null, seen: {}, drops: {}, walls: {}, mayBeBusy: new Set(), commander: null, embedded: false, acting: new Set(), fetching: new Map(), owedStacks: new Map(), wanted: new Map() }

class BridgeError extends Error {
  constructor (code, message) {
    super(message)
    this.code = code
  }
}

// The embedded server runs in a child process (see server.js); calls go over IPC.
function startServer ({ port, version }) {
  const child = fork(path.join(__dirname, 'server.js'), [JSON.stringify({ port, version })], { stdio: ['ignore', 2, 2, 'ipc'] })
  const pending = new Map()
  let nextId = 0
  const server = {
    child,
    call: (op, args = {}) => new Promise((resolve, reject) => {
      if (state.serverExit) return reject(new BridgeError('SERVER_DIED', state.serverExit)) // no waiting on the dead
      const id = ++nextId
      const timer = setTimeout(() => { pending.delete(id); reject(new BridgeError('SERVER_TIMEOUT', `the server did not answer ${op}`)) }, SERVER_TIMEOUT_MS)
      pending.set(id, { resolve, reject, timer })
      child.send({ id, op, args })
    })
  }
  child.on('message', (message) => {
    const waiting = pending.get(message.id)
    if (!waiting) return
    pending.delete(message.id)
    clearTimeout(waiting.timer)
    if (message.ok) waiting.resolve(message.result)
    else waiting.reject(new BridgeError('SERVER_ERROR', message.error))
  })
  child.on('exit', (code, signal) => {
    state.serverExit = `the embedded server exited (${signal ?? code})`
    for (const { reject, timer } of pending.values()) { clearTimeout(timer); reject(new BridgeError('SERVER_DIED', state.serverExit)) }
    pending.clear()
  })
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new BridgeError('SERVER_TIMEOUT', `the embedded server did not start within ${SERVER_TIMEOUT_MS / 1000} s`)), SERVER_TIMEOUT_MS)
    child.once('message', (message) => { clearTimeout(timer); server.port = message.port; resolve(server) })
    child.once('exit', () => reject(new BridgeError('SERVER_DIED', state.serverExit)))
  })
}

function log (text) {
  process.stderr.write(`[bridge] ${text}\n`)
}

function joinBot ({ host, port, version, username }) {
  return new Promise((resolve, reject) => {
    const bot = mineflayer.createBot({ host, port, version, username, auth: 'offline', hideErrors: true, checkTimeoutInterval: 60000 })
    const timer = setTimeout(() => reject(new BridgeError('LOGIN_TIMEOUT', `${username} did not spawn within ${LOGIN_TIMEOUT_MS / 1000} s`)), LOGIN_TIMEOUT_MS)
    bot.loadPlugin(pathfinder)
    bot.once('spawn', async () => {
      const movements = new Movements(bot)
      movements.canDig = false // only skills break blocks: every drop is one a plan asked for
      movements.allow1by1towers = false
      movements.scafoldingBlocks = []
      // its drop is counted from the feet to the block landed on: 5 is a drop of four feet to feet,
      // the planner's (worlds/standing.py MAX_DROP); at its default of 4 a planned walk down four had no path
      movements.maxDropDown = MAX_DROP + 1
      bot.pathfinder.setMovements(movements)
      // every bot of a team searches its paths in this one process: five builders in a house of a
      // thousand blocks each get a fifth of the thread, and 5 s (the default) ran out mid-search
      bot.pathfinder.thinkTimeout = THINK_TIMEOUT_MS
      if (state.embedded) {
        // the embedded server says when login is complete (it may re-send the spawn position until then)
        await new Promise((resolve) => {
          const done = (text) => { if (text.includes('gencoord:ready')) { bot.off('messagestr', done); resolve() } }
          bot.on('messagestr', done)
          setTimeout(resolve, 5000)
        })
      } else {
        await bot.waitForTicks(20)
      }
      clearTimeout(timer)
      resolve(bot)
    })
    bot.once('kicked', (reason) => reject(new BridgeError('KICKED', `${username} was kicked: ${JSON.stringify(reason)}`)))
    bot.once('error', (err) => reject(new BridgeError('CONNECT_FAILED', `${username} could not connect: ${err.message}`)))
    // a skill in progress fails the moment its bot (or the bot it hands to) is gone
    bot.gcEnded = new Promise((resolve, reject) => bot.once('end', (reason) => {
      if (bot.gcLeaving) return // it left: another team took the server
      state.dead[username] = `disconnected (${reason})`
      reject(new BridgeError('BOT_DISCONNECTED', `${username} disconnected (${reason})`))
    }))
    bot.gcEnded.catch(() => {})
  })
}

async function start ({ embedded, host = '127.0.0.1', port = 0, version = '1.21.4', agents }) {
  state.embedded = embedded
  const began = Date.now()
  if (embedded) {
    state.serv = await startServer({ port, version })
    port = state.serv.port
  }
  const serverS = (Date.now() - began) / 1000
  const joined = Date.now()
  for (const username of agents) state.bots[username] = await joinBot({ host, port, version, username })
  state.commander = state.bots[agents[0]]
  state.address = { host, port, version }
  return { host, port, version, server_s: serverS, login_s: (Date.now() - joined) / 1000, server_pid: state.serv?.child.pid ?? null }
}

// Another team on the same server: bots no longer needed leave, new ones join; the server,
// and the bots both teams share, stay.
async function team ({ agents }) {
  const joined = Date.now()
  for (const [name, bot] of Object.entries(state.bots)) {
    if (agents.includes(name)) continue
    bot.gcLeaving = true
    bot.quit()
    delete state.bots[name]
  }
  for (const username of agents) {
    if (!state.bots[username]) state.bots[username] = await joinBot({ ...state.address, username })
  }
  state.commander = state.bots[agents[0]]
  return { login_s: (Date.now() - joined) / 1000 }
}

// ------------------------------------------------------------------ episode set-up
const cmd = (parts) => parts.join(' ')
const mc = (name) => `minecraft:${name}`

async function runCommands (commands) {
  for (const command of commands) {
    state.commander.chat(`/${command}`)
    await sleep(5)
  }
}

function setupCommands ({ layout, agents, contents, clear }) {
  const commands = []
  for (const box of clear) commands.push(cmd(['fill', ...box[0], ...box[1], mc('air')]))
  if (!state.embedded) commands.push('kill @e[type=item]')
  for (const [name, ref] of Object.entries(layout.refs)) {
    if (ref.kind === 'container' || ref.kind === 'station') {
      commands.push(cmd(['setblock', ...ref.position, mc('air')]))
      // an unplaced station is a spot: an agent puts the block there from its inventory
      if (ref.placed !== false) commands.push(cmd(['setblock', ...ref.position, mc(ref.block)]))
    }
    let slot = 0
    for (const [item, count] of Object.entries(contents[name] ?? {})) {
      const stack = state.commander.registry.itemsByName[item]?.stackSize ?? 64
      for (let left = count; left > 0; left -= stack) {
        commands.push(cmd(['item', 'replace', 'block', ...ref.position, `container.${slot++}`, 'with', mc(item), Math.min(left, stack)]))
      }
    }
  }
  for (const [source, cells] of Object.entries(layout.resources)) {
    const block = layout.refs[source].block
    for (const cell of cells) commands.push(cmd(['setblock', ...cell, mc(block)]))
  }
  for (const agent of agents) {
    commands.push(cmd(['clear', agent.name]))
    for (const [item, count] of Object.entries(agent.inventory)) commands.push(cmd(['give', agent.name, mc(item), count]))
    commands.push(cmd(['tp', agent.name, ...agent.position]))
  }
  return commands
}

function setupDifferences ({ layout, agents }) {
  const problems = []
  for (const agent of agents) {
    const bot = state.bots[agent.name]
    const have = inventoryOf(bot)
    for (const [item, count] of Object.entries(agent.inventory)) if ((have[item] ?? 0) !== count) problems.push(`${agent.name} holds ${have[item] ?? 0} ${item}, not ${count}`)
    for (const item of Object.keys(have)) if (!(item in agent.inventory)) problems.push(`${agent.name} still holds ${item}`)
    const gap = bot.entity.position.distanceTo(new Vec3(...agent.position))
    if (gap > 1) problems.push(`${agent.name} is ${gap.toFixed(1)} blocks from its start`)
  }
  const viewer = state.commander
  for (const [name, ref] of Object.entries(layout.refs)) {
    if (ref.kind !== 'container' && ref.kind !== 'station') continue
    const block = viewer.blockAt(new Vec3(...ref.position))
    const expected = ref.placed === false ? 'air' : ref.block
    if (block?.name !== expected) problems.push(`${name} shows ${block?.name ?? 'nothing'}, not ${expected}`)
  }
  for (const [source, cells] of Object.entries(layout.resources)) {
    const missing = cells.filter((c) => viewer.blockAt(new Vec3(...c))?.name !== layout.refs[source].block).length
    if (missing) problems.push(`${source} lacks ${missing} of ${cells.length} blocks`)
  }
  for (const [site, cells] of Object.entries(layout.sites)) {
    const filled = cells.filter((c) => viewer.blockAt(new Vec3(...c))?.name !== 'air').length
    if (filled) problems.push(`${site} still has ${filled} blocks`)
  }
  return problems
}

async function reset (spec) {
  if (state.serverExit) throw new BridgeError('SERVER_DIED', state.serverExit)
  const gone = Object.entries(state.dead)
  if (gone.length) throw new BridgeError('BOT_DISCONNECTED', gone.map(([name, why]) => `${name} ${why}`).join('; '))
  state.layout = spec.layout
  state.drops = spec.drops
  state.seen = {}
  state.walls = {}
  state.mayBeBusy = new Set()
  state.owedStacks.clear() // stacks of the last episode are cleared below
  state.wanted.clear()
  forgetOwed()
  state.furnace = spec.furnace
  await state.serv?.call('freeStations')
  await state.serv?.call('furnaceRules', spec.furnace)
  await state.serv?.call('addRecipes', { recipes: spec.recipes ?? [] })
  for (const bot of Object.values(state.bots)) addRecipes(bot.registry, spec.recipes ?? [])
  for (const bot of Object.values(state.bots)) {
    bot.pathfinder.setGoal(null)
    if (bot.currentWindow) bot.closeWindow(bot.currentWindow)
  }
  await state.serv?.call('clearItems')
  await runCommands(setupCommands(spec))
  // the ready handshake: act only once every bot sees the world the spec describes
  const until = Date.now() + SETUP_TIMEOUT_MS
  let problems = setupDifferences(spec)
  while (problems.length) {
    if (Date.now() > until) throw new BridgeError('SETUP_FAILED', `the world did not reach its start state: ${problems.slice(0, 5).join('; ')}`)
    await sleep(100)
    problems = setupDifferences(spec)
  }
  // once every station stands (setting a block empties what stood there)
  await state.serv?.call('fuelStations', { stations: spec.fuel ?? [] })
  await state.serv?.call('clearItems')
  const herds = Object.entries(spec.layout.herds ?? {}).map(([herd, h]) => ({ herd, ...h }))
  const spawned = await state.serv?.call('herds', { table: spec.loot ?? { blocks: {}, mobs: {} }, seed: spec.seed ?? 0, herds })
  state.herds = new Map((spawned?.animals ?? []).map(({ id, herd }) => [id, herd]))
  if (herds.length) {
    // act only once every bot sees every animal it may hunt
    const until = Date.now() + SETUP_TIMEOUT_MS
    const seen = () => Object.values(state.bots).every((bot) => [...state.herds.keys()].every((id) => bot.entities[id]))
    while (!seen()) {
      if (Date.now() > until) throw new BridgeError('SETUP_FAILED', 'the bots do not see every animal of the herds')
      await sleep(100)
    }
  }
  return observe()
}

// ------------------------------------------------------------------ acting and observing
// What a skill may know of the world: the layout, what bots saw, and what the operator did to
// the world (walls round refs, stations that may be taken: a skill still learns each from the server).
function context () {
  // handTo: tell the embedded server whom a hand-over is thrown to, and get the hand-over's id;
  // delivered: what that hand-over's own throws put in its receiver's bag. Another server has
  // neither (null): a hand-over there is judged by the receiver's count alone.
  const handTo = state.serv ? async (giver, receiver) => (await state.serv.call('handTo', { giver, receiver })).handover : async () => null
  const delivered = async (handover) => (await state.serv.call('delivered', { handover }))?.received ?? 0
  const stackOf = async (handover) => (await state.serv.call('delivered', { handover }))?.at ?? null
  // gifts: what hand-overs have put in a bot's bag this episode (none known on another server)
  const gifts = state.serv ? async (player, item) => (await state.serv.call('gifts', { player }))[item] ?? 0 : async () => 0
  return { herds: state.herds, hunted: state.hunted, bots: state.bots, layout: state.layout, seen: state.seen, drops: state.drops, walls: state.walls, mayBeBusy: state.mayBeBusy, furnace: state.furnace, acting: state.acting, fetching: state.fetching, owedStacks: state.owedStacks, wanted: state.wanted, handTo, delivered, stackOf, gifts }
}

// Every player's inventory as the server holds it (the bots' view on a server we do not run).
async function holdings () {
  if (!state.serv) return Object.fromEntries(Object.entries(state.bots).map(([name, bot]) => [name, inventoryOf(bot)]))
  const { players } = await state.serv.call('dump')
  return Object.fromEntries(Object.entries(players).map(([name, player]) => [name, player.inventory]))
}

// Bots act at once, one action per bot at a time (the caller keeps each agent's queue).
// With `around`, the answer carries every inventory just before and just after: what a
// hand-over check compares.
async function act ({ action, around = false }) {
  // busy from here: a giver waiting on this bot must not start walking it to a stack meanwhile
  // (two walks at once on one bot end each other: "The goal was changed before it could be completed!")
  state.acting.add(action.agent)
  try {
    // a receiver walks onto the stacks thrown out of its reach first (see giveItem)
    const bot = state.bots[action.agent]
    if (bot) {
      const before = bot.entity.position.clone()
      await collectStacks(context(), bot)
      // only a bot the pickup walked off comes back; one that was never there fails as in the simulator
      const walked = bot.entity.position.distanceTo(before) > 0.5
      if (walked && action.name !== 'go_to') await backInReach(context(), bot, action)
    }
    return await actAfterSettling(action, around)
  } finally {
    state.acting.delete(action.agent)
  }
}

async function actAfterSettling (action, around) {
  const bot = state.bots[action.agent]
  if (bot && action.name !== 'obtain_block') {
    try {
      await collectOwed(context(), bot) // what it dug last is in hand before it does anything else
    } catch (err) {
      return { failure: { code: err.code, message: err.message }, inventories: { [action.agent]: inventoryOf(bot) } }
    }
  }
  const before = around ? await holdings() : null
  const answer = await actOnce(action)
  if (around) answer.around = { before, after: await holdings() }
  return answer
}

async function actOnce (action) {
  const bot = state.bots[action.agent]
  if (!bot) throw new BridgeError('UNKNOWN_AGENT', `${action.agent} is not in this world`)
  const inventories = () => {
    const after = { [action.agent]: inventoryOf(bot) }
    if (action.to && state.bots[action.to]) after[action.to] = inventoryOf(state.bots[action.to])
    return after
  }
  for (const name of [action.agent, action.to, action.target_kind === 'agent' ? action.target : null]) {
    if (name && state.dead[name]) return { failure: { code: 'BOT_DISCONNECTED', message: `${name} ${state.dead[name]}` }, inventories: {} }
  }
  const skill = SKILLS[action.name]
  if (!skill) return { failure: { code: 'UNSUPPORTED_ACTION', message: `the Minecraft world has no ${action.name} skill` }, inventories: inventories() }
  try {
    const ended = [bot, state.bots[action.to]].filter(Boolean).map((b) => b.gcEnded)
    const done = await Promise.race([skill(context(), bot, action), ...ended])
    return { failure: null, inventories: inventories(), ...moved(done) }
  } catch (err) {
    bot.pathfinder.setGoal(null)
    if (bot.currentWindow) bot.closeWindow(bot.currentWindow)
    const failure = err instanceof SkillFailure || err instanceof BridgeError
      ? { code: err.code, message: err.message, retry_after_s: err.retryAfterS ?? null }
      : { code: state.dead[action.agent] ? 'BOT_DISCONNECTED' : 'SKILL_ERROR', message: `${action.name}: ${err.message}` }
    return { failure, inventories: inventories(), ...moved(err) }
  }
}

// A hand-over's own count of what reached its receiver (see giveItem), when the skill knows it.
function moved (outcome) {
  return Number.isInteger(outcome?.delivered) ? { delivered: outcome.delivered } : {}
}

function botSites () {
  const sites = {}
  for (const [site, cells] of Object.entries(state.layout.sites)) {
    sites[site] = {}
    for (const cell of cells) {
      const name = state.commander.blockAt(new Vec3(...cell))?.name ?? 'air'
      if (name !== 'air') sites[site][name] = (sites[site][name] ?? 0) + 1
    }
  }
  return sites
}

// What the commander bot sees standing in each build site (the bots' view, beside the server's).
function botCells () {
  const found = {}
  for (const [site, { origin, size }] of Object.entries(state.layout.builds ?? {})) {
    found[site] = {}
    for (let y = 0; y < size[1]; y++) {
      for (let z = 0; z < size[2]; z++) {
        for (let x = 0; x < size[0]; x++) {
          const name = state.commander.blockAt(new Vec3(origin[0] + x, origin[1] + y, origin[2] + z))?.name ?? 'air'
          if (name !== 'air') found[site][`${x},${y},${z}`] = name
        }
      }
    }
  }
  return found
}

async function observe () {
  const bots = {}
  for (const [name, bot] of Object.entries(state.bots)) {
    const p = bot.entity.position
    bots[name] = { inventory: inventoryOf(bot), position: [p.x, p.y, p.z], connected: !state.dead[name] }
  }
  const seen = { sites: state.layout ? botSites() : {}, containers: state.seen, blocks: state.layout ? botCells() : {} }
  let server = null
  let serverError = null
  if (state.serv && state.layout) {
    try {
      server = {
        ...(await state.serv.call('dump')),
        sites: await state.serv.call('sites', { sites: state.layout.sites }),
        blocks: await state.serv.call('cells', { builds: state.layout.builds ?? {} })
      }
    } catch (err) {
      serverError = err.message // a dead server has no ground truth: the bots' last view is all there is
    }
  }
  return { bots, seen, server, server_error: serverError }
}

async function close () {
  for (const bot of Object.values(state.bots)) bot.quit()
  state.bots = {}
  if (state.serv) state.serv.child.kill()
  state.serv = null
  return {}
}

// ------------------------------------------------------------------ changes nobody's action causes
// (the gate's mid-run anomalies, and blocked routes or busy stations a world starts with)
async function settle (ok, what) {
  const until = Date.now() + SETUP_TIMEOUT_MS
  while (!ok()) {
    if (Date.now() > until) throw new BridgeError('CHANGE_FAILED', `the world did not show ${what}`)
    await sleep(50)
  }
}

const CHANGES = {
  async wall ({ ref, cells }) {
    await runCommands(cells.map((cell) => cmd(['setblock', ...cell, mc('stone_bricks')])))
    state.walls[ref] = cells
    await settle(() => cells.every((c) => state.commander.blockAt(new Vec3(...c))?.name === 'stone_bricks'), `the wall round ${ref}`)
  },
  async deplete ({ source }) {
    const cells = state.layout.resources[source] ?? []
    await runCommands(cells.map((cell) => cmd(['setblock', ...cell, mc('air')])))
    await settle(() => cells.every((c) => state.commander.blockAt(new Vec3(...c))?.name === 'air'), `${source} emptied`)
  },
  async occupy ({ station, seconds }) {
    state.mayBeBusy.add(station)
    await runCommands([cmd(['occupy', ...state.layout.refs[station].position, seconds])])
  },
  async lose_throw ({ player }) {
    if (!state.serv) throw new BridgeError('UNSUPPORTED_CHANGE', 'only the embedded server can lose a thrown stack')
    await state.serv.call('loseNextThrow', { giver: player })
  },
  async clear ({ player, item, count }) {
    const bot = state.bots[player]
    const left = Math.max(0, (inventoryOf(bot)[item] ?? 0) - count)
    await runCommands([cmd(['clear', player, mc(item), count])])
    await settle(() => (inventoryOf(bot)[item] ?? 0) === left, `${count} ${item} gone from ${player}`)
  }
}

async function change (args) {
  const apply = CHANGES[args.kind]
  if (!apply) throw new BridgeError('BAD_REQUEST', `no change ${args.kind}`)
  await apply(args)
  return {}
}

// The end of a run: every bot picks up what it dug last (problems are the snapshot's to show).
async function settle () {
  const late = []
  for (const bot of Object.values(state.bots)) {
    try { await collectOwed(context(), bot) } catch (err) { late.push(err.message) }
  }
  return { late }
}

// A live view of the world around the first bot, in any browser (view.js). A port that is
// taken is an answer, not a crash later.
async function view ({ port }) {
  if (state.viewing) return { port: state.viewing }
  try {
    await require('./view').serveView(state.commander, port)
  } catch (err) {
    throw new BridgeError('VIEW_PORT_TAKEN', `the view cannot listen on port ${port}: ${err.code ?? err.message}`)
  }
  state.viewing = port
  return { port }
}

// Fault injection (reliability tests): the embedded server drops a player mid-episode.
async function kick ({ name }) {
  if (!state.serv) throw new BridgeError('NOT_EMBEDDED', 'only the embedded server can drop a player')
  return state.serv.call('kick', { name })
}

// The bridge's and the embedded server's memory, for the soak benchmark.
async function memory () {
  return { bridge: memoryReading(), server: state.serv ? await state.serv.call('memory') : null }
}

const OPS = { start, reset, act, observe, close, kick, change, settle, view, team, memory }

function answer (message) {
  protocolWrite(JSON.stringify(message) + '\n')
}

async function handle (line) {
  let request
  try {
    request = JSON.parse(line)
  } catch (err) {
    answer({ id: null, ok: false, error: { code: 'BAD_REQUEST', message: `not JSON: ${err.message}` } })
    return
  }
  const op = OPS[request.op]
  if (!op) {
    answer({ id: request.id, ok: false, error: { code: 'BAD_REQUEST', message: `unknown op ${request.op}` } })
    return
  }
  try {
    answer({ id: request.id, ok: true, result: await op(request.args ?? {}) })
  } catch (err) {
    answer({ id: request.id, ok: false, error: { code: err.code ?? 'BRIDGE_ERROR', message: err.message } })
  }
  if (request.op === 'close') process.exit(0)
}

// Acts and observations run as they come: agents act at once. Anything else (start,
// reset, close) waits for every act in flight and runs alone, in order.
const CONCURRENT = new Set(['act', 'observe', 'kick'])
const inFlight = new Set()
let queue = Promise.resolve()
readline.createInterface({ input: process.stdin }).on('line', (line) => {
  if (!line.trim()) return
  let op = null
  try { op = JSON.parse(line).op } catch (err) { /* handle() answers it */ }
  if (CONCURRENT.has(op)) {
    const running = queue.then(() => handle(line))
    inFlight.add(running)
    running.finally(() => inFlight.delete(running))
  } else {
    queue = queue.then(() => Promise.allSettled([...inFlight])).then(() => handle(line))
  }
}).on('close', () => {
  // the caller is gone: acts still in flight are moot, so end the bots and the server now
  close().finally(() => process.exit(0))
})
process.on('uncaughtException', (err) => log(`uncaught: ${err.stack ?? err}`))
process.on('unhandledRejection', (err) => log(`unhandled: ${err?.stack ?? err}`))
answer({ event: 'hello', pid: process.pid })
