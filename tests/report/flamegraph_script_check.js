// Runs the flame graph SVG's embedded script (argv[2]: the SVG file) in node
// against a minimal stand-in of the DOM built from the SVG's frames, then
// clicks a frame, searches and resets, printing what the script did as
// lines the C++ test checks. Exits 1 with a message on any script error.
"use strict";
const fs = require("fs");
const svg = fs.readFileSync(process.argv[2], "utf8");
const script = svg.match(/<!\[CDATA\[([\s\S]*?)\]\]>/)[1];

function unescape(s) {
  return s.replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&quot;/g, '"')
          .replace(/&#39;/g, "'").replace(/&amp;/g, "&");
}
function element(attrs) {
  return {
    attrs: Object.assign({}, attrs), style: {}, textContent: "",
    getAttribute(k) { return this.attrs[k] === undefined ? null : String(this.attrs[k]); },
    setAttribute(k, v) { this.attrs[k] = v; },
  };
}
const frames = [];
const re = /<g class="f" data-n="([^"]*)"><title>([^<]*)<\/title><rect x="([^"]+)" y="([^"]+)" width="([^"]+)" height="[^"]+" fill="([^"]+)"[^>]*\/><text[^>]*>([^<]*)<\/text><\/g>/g;
for (let m; (m = re.exec(svg)) !== null;) {
  const rect = element({x: m[3], y: m[4], width: m[5], fill: m[6]});
  const text = element({});
  text.textContent = unescape(m[7]);
  const title = element({});
  title.textContent = unescape(m[2]);
  const g = element({"data-n": unescape(m[1])});
  g.getElementsByTagName = (t) => [{rect, text, title}[t]];
  g.name = unescape(m[1]);
  frames.push(g);
}
const byId = {details: element({}), matched: element({}), reset: element({}), search: element({})};
let answer = null;
global.document = {
  getElementById: (id) => byId[id],
  getElementsByClassName: (c) => (c === "f" ? frames : []),
};
global.prompt = () => answer;
global.alert = (m) => { throw new Error("alert: " + m); };
try {
  eval(script + "\ninit();");
  const find = (name) => frames.find((g) => g.name === name);
  const state = (name) => {
    const g = find(name), r = g.getElementsByTagName("rect")[0], t = g.getElementsByTagName("text")[0];
    return `${name} display=${g.style.display || "shown"} x=${(+r.attrs.x).toFixed(2)} ` +
           `width=${(+r.attrs.width).toFixed(2)} opacity=${g.style.opacity === undefined ? 1 : g.style.opacity} ` +
           `label=${t.textContent} fill=${r.attrs.fill}`;
  };
  const report = (step, names) => { for (const n of names) console.log(step + ": " + state(n)); };
  const names = process.argv.slice(3);
  find(names[0]).onmouseover();
  console.log("hover: details=" + byId.details.textContent);
  find(names[0]).onclick();
  report("zoom " + names[0], names);
  byId.reset.onclick();
  report("reset", names);
  answer = "^" + names[0] + "$";
  byId.search.onclick();
  report("search", names);
  console.log("search: " + byId.matched.textContent);
} catch (e) {
  console.error("script error: " + e.stack);
  process.exit(1);
}
