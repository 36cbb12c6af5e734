'use strict'
// The embedded server, run as its own child process of the bridge: flying-squid on a
// superflat world whose surface is the y = 63 our task data assumes, with the gencoord
// plugin loaded. flying-squid takes over its process's stdin and stdout for a console,
// so it cannot share a process with the bridge's JSON lines; the bridge talks to it over
// Node's IPC channel instead ({id, op} → {id, ok, result}).

const path = require('path')
const { Vec3 } = require('vec3')
const { memoryReading } = require('./memory')

const SURFACE_Y = 63

function startServer ({ port, version }) {
  const mcServer = require('flying-squid')
  const serv = mcServer.createMCServer({
    port,
    version,
    'online-mode': false,
    'max-players': 16,
    logging: false,
    noConsoleOutput: true,
    gameMode: 0,
    difficulty: 0, // peaceful: no mobs wander into an episode
    'everybody-op': true,
    'view-distance': 4,
    'max-entities': 200,
    kickTimeout: 30000,
    'player-list-text': { header: { text: 'gencoord' }, footer: { text: '' } },
    motd: 'gencoord',
    generation: { name: 'superflat', options: { middleThickness: SURFACE_Y - 1, worldHeight: 80 } },
    plugins: { [path.join(__dirname, 'plugin.js')]: {} }
  })
  serv.on('error', (err) => process.stderr.write(`server error: ${err.stack ?? err}\n`))
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('the embedded server did not start within 20 s')), 20000)
    serv.once('ready', () => { clearTimeout(timer); resolve(serv) })
  })
}

async function blocksIn (serv, sites) {
  const found = {}
  for (const [site, cells] of Object.entries(sites)) {
    found[site] = {}
    for (const cell of cells) {
      const block = await serv.overworld.getBlock(new Vec3(...cell))
      if (block.name !== 'air') found[site][block.name] = (found[site][block.name] ?? 0) + 1
    }
  }
  return found
}

// The blocks standing in each build site's box, by "x,y,z" offset from its origin (air left out).
async function cellsIn (serv, builds) {
  const found = {}
  for (const [site, { origin, size }] of Object.entries(builds)) {
    found[site] = {}
    for (let y = 0; y < size[1]; y++) {
      for (let z = 0; z < size[2]; z++) {
        for (let x = 0; x < size[0]; x++) {
          const block = await serv.overworld.getBlock(new Vec3(origin[0] + x, origin[1] + y, origin[2] + z))
          if (block.name !== 'air') found[site][`${x},${y},${z}`] = block.name
        }
      }
    }
  }
  return found
}

async function main () {
  const { port, version } = JSON.parse(process.argv[2])
  const serv = await startServer({ port, version })
  const ops = {
    dump: () => serv.gencoord.dump(),
    clearItems: () => { serv.gencoord.clearItems(); return {} },
    freeStations: () => { serv.gencoord.freeStations(); return {} },
    handTo: (handover) => serv.gencoord.handTo(handover),
    delivered: (handover) => serv.gencoord.delivered(handover),
    gifts: (query) => serv.gencoord.gifts(query),
    loseNextThrow: (giver) => { serv.gencoord.loseNextThrow(giver); return {} },
    furnaceRules: (rules) => { serv.gencoord.furnaceRules(rules); return {} },
    fuelStations: (args) => { serv.gencoord.fuelStations(args); return {} },
    herds: (args) => serv.gencoord.herds(args),
    addRecipes: ({ recipes }) => { serv.gencoord.addRecipes(recipes); return {} },
    sites: ({ sites }) => blocksIn(serv, sites),
    cells: ({ builds }) => cellsIn(serv, builds),
    memory: memoryReading,
    // Fault injection for the reliability tests: drop a player as a lost connection would.
    kick: ({ name }) => {
      const player = serv.players.find((p) => p.username === name)
      if (!player) throw new Error(`no player ${name} is online`)
      player.kick('dropped by a fault test')
      return {}
    }
  }
  process.on('message', async ({ id, op, args }) => {
    try {
      process.send({ id, ok: true, result: await ops[op](args ?? {}) })
    } catch (err) {
      process.send({ id, ok: false, error: err.message })
    }
  })
  process.on('disconnect', () => process.exit(0)) // the bridge is gone: so is its server
  process.send({ event: 'ready', port: serv.listeningPort })
}

main().catch((err) => {
  process.stderr.write(`server failed: ${err.stack ?? err}\n`)
  process.exit(1)
})
