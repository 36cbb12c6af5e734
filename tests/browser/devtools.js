'use strict'
// Headless Chromium driven over the DevTools protocol, for the browser tests' scripts.
// open(modules, windowSize, flags) starts it and resolves to { send(method, params), close() }.
const { spawn } = require('child_process')
const http = require('http')
const path = require('path')

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))
const getJson = (address) => new Promise((resolve, reject) => {
  http.get(address, (response) => {
    let body = ''
    response.on('data', (chunk) => { body += chunk })
    response.on('end', () => resolve(JSON.parse(body)))
  }).on('error', reject)
})

async function open (modules, windowSize, flags = []) {
  const WebSocket = require(path.join(modules, 'ws'))
  const port = 9300 + Math.floor(Math.random() * 500)
  const chrome = spawn('chromium', [
    '--headless=new', '--no-sandbox', ...flags,
    `--window-size=${windowSize}`, `--remote-debugging-port=${port}`, 'about:blank'
  ], { stdio: 'ignore' })
  try {
    let pages = null
    for (let tries = 0; !pages && tries < 100; tries++) {
      pages = await getJson(`http://127.0.0.1:${port}/json`).catch(() => null)
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
    return { send, close: () => { socket.close(); chrome.kill() } }
  } catch (err) {
    chrome.kill()
    throw err
  }
}

module.exports = { open, sleep }
