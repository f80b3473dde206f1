/* explorer_pixels.js CHROMIUM SHOT.png: the second check of the explorer's
 * screenshot, in a fresh browser: a PNG of 1000 x 1400 that is not blank
 * (ink, anything darker than near-white, on more than 2% of its pixels)
 * and not flat (more than 50 colours), decoded on a canvas. */
"use strict";
const fs = require("fs");
const puppeteer = require("puppeteer-core");

const [chromium, shot] = process.argv.slice(2);
(async () => {
  const png = fs.readFileSync(shot);
  const browser = await puppeteer.launch({ executablePath: chromium, headless: true,
                                           args: ["--no-sandbox", "--disable-gpu"] });
  try {
    const page = await browser.newPage();
    const r = await page.evaluate(async (b64) => {
      const img = new Image();
      img.src = "data:image/png;base64," + b64;
      await img.decode();
      const c = document.createElement("canvas");
      c.width = img.width;
      c.height = img.height;
      const g = c.getContext("2d");
      g.drawImage(img, 0, 0);
      const d = g.getImageData(0, 0, c.width, c.height).data;
      let ink = 0;
      const colours = new Set();
      for (let i = 0; i < d.length; i += 4) {
        if (d[i] < 240 || d[i + 1] < 240 || d[i + 2] < 240) ink++;
        colours.add((d[i] << 16) | (d[i + 1] << 8) | d[i + 2]);
      }
      return { w: img.width, h: img.height, ink: ink / (d.length / 4), colours: colours.size };
    }, png.toString("base64"));
    console.log("screenshot " + r.w + "x" + r.h + ": ink on " + (100 * r.ink).toFixed(2) +
                "% of pixels, " + r.colours + " colours");
    const fail = (r.w !== 1000 || r.h !== 1400) ? "not 1000x1400"
      : r.ink <= 0.02 ? "blank" : r.colours <= 50 ? "flat" : null;
    if (fail) console.log("FAIL: the screenshot is " + fail);
    process.exit(fail ? 1 : 0);
  } finally {
    await browser.close();
  }
})().catch((e) => { console.log("FAIL: " + (e && e.stack || e)); process.exit(1); });
