'use strict'
// Screenshot of a page after it has run for a while in real time, with headless Chromium over
// the DevTools protocol (a plain --screenshot runs page workers on virtual time, so the
// viewer's terrain, meshed in a worker, never appears).
// usage: node screenshot.js URL OUT.png WAIT_MS NODE_MODULES_DIR
const { spawn } = require('child_process')
const http = require('http')
const path = require('path')

const [url, out, waitMs, modules] = process.argv.slice(2)
const WebSocket = require(path.join(modules, 'ws'))
const PORT = 9300 + Math.floor(Math.random() * 500)
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))
const getJson = (address) => new Promise((resolve, reject) => {
  http.get(address, (response) => {
    let body = ''
    response.on('data', (chunk) => { body += chunk })
    response.on('end', () => resolve(JSON.parse(body)))
  }).on('error', reject)
})

const chrome = spawn('chromium', [
  '--headless=new', '--no-sandbox', '--use-angle=swiftshader', '--enable-unsafe-swiftshader',
  '--window-size=800,600', `--remote-debugging-port=${PORT}`, 'about:blank'
], { stdio: 'ignore' })

async function main () {
  let pages = null
  for (let tries = 0; !pages && tries < 100; tries++) {
    pages = await getJson(`http://127.0.0.1:${PORT}/json`).catch(() => null)
    if (!pages) await sleep(100)
  }
  if (!pages) throw new Error('chromium did not open its debugging port')
  const socket = new WebSocket(pages.find((page) => page.type === 'page').webSocketDebuggerUrl)
  await new Promise((resolve) => socket.once('open', resolve))
  let next = 0
  const waiting = new Map()
  socket.on('message', (raw) => {
    const message = JSON.parse(raw)
    waiting.get(message.id)?.(message)
    waiting.delete(message.id)
  })
  const send = (method, params = {}) => new Promise((resolve) => {
    waiting.set(++next, resolve)
    socket.send(JSON.stringify({ id: next, method, params }))
  })
  await send('Page.navigate', { url })
  await sleep(Number(waitMs))
  const shot = await send('Page.captureScreenshot', { format: 'png' })
  require('fs').writeFileSync(out, Buffer.from(shot.result.data, 'base64'))
  socket.close()
}

main().then(() => { chrome.kill(); process.exit(0) }, (err) => { console.error(err.message); chrome.kill(); process.exit(1) })
