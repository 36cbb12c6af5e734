'use strict'
// The live view behind --view: prismarine-viewer's browser page, fed the world one bot sees.
// prismarine-viewer's own `mineflayer()` entry also loads its headless renderer, which needs
// the native `canvas` package; the page needs none of that, so this serves the same page and
// the same world stream (socket.io + WorldView) without it.

const http = require('http')
const express = require('express')
const { Server } = require('socket.io')
const { setupRoutes } = require('prismarine-viewer/lib/common')
const { WorldView } = require('prismarine-viewer/viewer/lib/worldView')

function serveView (bot, port, viewDistance = 4) {
  const app = express()
  setupRoutes(app)
  const server = http.createServer(app)
  const io = new Server(server)
  io.on('connection', (socket) => {
    socket.emit('version', bot.version)
    const worldView = new WorldView(bot.world, viewDistance, bot.entity.position, socket)
    worldView.init(bot.entity.position)
    const follow = () => {
      socket.emit('position', { pos: bot.entity.position, yaw: bot.entity.yaw, addMesh: true })
      worldView.updatePosition(bot.entity.position)
    }
    follow()
    bot.on('move', follow)
    worldView.listenToBot(bot)
    socket.on('disconnect', () => {
      bot.removeListener('move', follow)
      worldView.removeListenersFromBot(bot)
    })
  })
  return new Promise((resolve, reject) => {
    server.once('error', reject)
    server.listen(port, '127.0.0.1', () => resolve(server))
  })
}

module.exports = { serveView }
