'use strict'
// Opens report.html files in headless Chromium at 1,400 px and says, for each, what a reader would see
// wrong: "undefined" or "NaN" in the page or in any episode the trace viewer shows, a figure that is
// blank, a page wider than the window, a headline table that does not fit. Also saves a screenshot.
// usage: node inspect_report.js NODE_MODULES_DIR OUT_DIR REPORT.html...   (prints one JSON line per report)
const path = require('path')
const { open, sleep } = require('./devtools')

const [modules, outDir, ...reports] = process.argv.slice(2)
const WIDTH = 1400

// Runs in the page: clicks through up to 40 episodes of the viewer and measures what is on screen.
const INSPECT = `(async () => {
  const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
  for (let i = 0; i < 100 && !document.querySelector('#list div'); i++) await sleep(50);
  const bad = /\\bundefined\\b|\\bNaN\\b/;
  const problems = [];
  const items = [...document.querySelectorAll('#list div')].slice(0, 40);
  for (const item of items) {
    item.click();
    const text = document.getElementById('detail').innerText;
    if (bad.test(text)) problems.push('episode ' + item.innerText.split('\\n')[0] + ' shows: ' + text.match(/.{0,60}(undefined|NaN).{0,20}/)[0]);
  }
  if (bad.test(document.body.innerText.replace(document.getElementById('detail').innerText, ''))) problems.push('the page shows undefined or NaN');
  const figures = [...document.querySelectorAll('.figures img')].map((img) => {
    const canvas = document.createElement('canvas');
    canvas.width = img.naturalWidth; canvas.height = img.naturalHeight;
    const context = canvas.getContext('2d');
    context.drawImage(img, 0, 0);
    const data = canvas.width ? context.getImageData(0, 0, canvas.width, canvas.height).data : [];
    let inked = 0;
    for (let i = 0; i < data.length; i += 4) if (data[i] < 200 || data[i + 1] < 200 || data[i + 2] < 200) inked++;
    return { name: img.alt, width: img.naturalWidth, shown: img.getBoundingClientRect().width, inked: inked / Math.max(1, data.length / 4) };
  });
  const headline = document.querySelector('#headline table');
  return JSON.stringify({
    problems,
    episodes: items.length,
    pageWidth: document.documentElement.scrollWidth,
    windowWidth: window.innerWidth,
    headlineRight: headline ? headline.getBoundingClientRect().right : null,
    figures,
  });
})()`

async function main () {
  const browser = await open(modules, `${WIDTH},900`, ['--allow-file-access-from-files', '--hide-scrollbars'])
  try {
    for (const [index, report] of reports.entries()) {
      await browser.send('Page.navigate', { url: 'file://' + path.resolve(report) })
      await sleep(1500)
      const found = await browser.send('Runtime.evaluate', { expression: INSPECT, awaitPromise: true, returnByValue: true })
      if (found.result.exceptionDetails) throw new Error(`${report}: ${found.result.exceptionDetails.text}`)
      await browser.send('Runtime.evaluate', { expression: 'window.scrollTo(0, 0)' })
      const shot = await browser.send('Page.captureScreenshot', { format: 'png' })
      const file = path.join(outDir, `report-${index}.png`)
      require('fs').writeFileSync(file, Buffer.from(shot.result.data, 'base64'))
      console.log(JSON.stringify({ report, screenshot: file, ...JSON.parse(found.result.result.value) }))
    }
  } finally {
    browser.close()
  }
}

main().then(() => process.exit(0), (err) => { console.error(err.message); process.exit(1) })
