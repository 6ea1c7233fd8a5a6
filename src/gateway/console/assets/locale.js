// uPlot formats its axes with Intl.NumberFormat(navigator.language) when it loads, which throws on
// the POSIX tag some browsers report (headless Chromium under LANG=C.UTF-8 says "en-US@posix"):
// uPlot would not load and no chart would render. Where the browser's tag is one Intl refuses,
// the page sees the nearest tag it accepts instead. Loaded before uplot.js (both deferred, in order).
(() => {
  const tag = navigator.language;
  try {
    new Intl.NumberFormat(tag);
    return;
  } catch {
    // not a tag Intl accepts: replaced below
  }
  let accepted = 'en-US';
  try {
    accepted =
      Intl.getCanonicalLocales(String(tag).split('@')[0].replace(/_/g, '-'))[0] ?? accepted;
  } catch {
    // nothing usable in it: en-US
  }
  Object.defineProperty(navigator, 'language', { value: accepted, configurable: true });
})();
