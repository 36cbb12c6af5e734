'use strict'
// One process's memory, after a full collection when Node runs with --expose-gc: the soak
// benchmark's reading, since resident memory alone also counts garbage not yet collected.
function memoryReading () {
  if (global.gc) global.gc()
  const { heapUsed, rss } = process.memoryUsage()
  return { heap_mib: heapUsed / 2 ** 20, rss_mib: rss / 2 ** 20, collected: Boolean(global.gc) }
}

module.exports = { memoryReading }
