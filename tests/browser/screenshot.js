'use strict'
// Screenshot of a page after it has run for a while in real time, with headless Chromium over
// the DevTools protocol (a plain --screenshot runs page workers on virtual time, so the
// viewer's terrain, meshed in a worker, never appears).
// usage: node screenshot.js URL OUT.png WAIT_MS NODE_MODULES_DIR
const { open, sleep } = require('./devtools')

const [url, out, waitMs, modules] = process.argv.slice(2)

async function main () {
  const browser = await open(modules, '800,600', ['--use-angle=swiftshader', '--enable-unsafe-swiftshader'])
  try {
    await browser.send('Page.navigate', { url })
    await sleep(Number(waitMs))
    const shot = await browser.send('Page.captureScreenshot', { format: 'png' })
    require('fs').writeFileSync(out, Buffer.from(shot.result.data, 'base64'))
  } finally {
    browser.close()
  }
}

main().then(() => process.exit(0), (err) => { console.error(err.message); process.exit(1) })
