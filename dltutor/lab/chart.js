// The live lab's plots, drawn in the browser (see chart.py for the data they receive).
//
// Python sends a small "frame" of numbers at most ten times a second; this file draws it on
// <canvas> elements. Drawing in the browser costs a few milliseconds and sends no pictures
// over the wire, so the plots keep up while the kernel trains. Panels are laid out on a CSS
// grid that puts them side by side on a wide page and stacks them on a narrow one; each canvas
// takes the width it gets. Text is 12 px or more.

const FONT = "12px system-ui, -apple-system, 'Segoe UI', sans-serif";
const SMALL = "11px system-ui, -apple-system, 'Segoe UI', sans-serif";
// Above each plot, a lane for the labels of the marks (the steps where a control changed): the
// labels never cover data. Two rows; labels that still do not fit are counted into a
// neighbour ("lr 0.3 (and 2 more)"; chart.py sends the words in the learner's language).
const LANE_ROW = 14, LANE_ROWS = 2;
const MORE = "{mark} (and {count} more)";
// A panel is shorter when the plots are narrower than NARROW (a phone), so that the controls
// and a plot fit on one screen.
const PANEL_HEIGHT = 236, NARROW_PANEL_HEIGHT = 180, NARROW = 600;

// The height of a line panel when all the plots together are ``plotsWidth`` wide.
function panelHeight(plotsWidth) {
  return plotsWidth < NARROW ? NARROW_PANEL_HEIGHT : PANEL_HEIGHT;
}
const PAD = { left: 52, right: 12, top: 6 + LANE_ROW * LANE_ROWS, bottom: 30 };
const MARK_COLOR = "#7a4dd8", MARK_TEXT = "#5a2db8";

function niceStep(span, count) {
  const raw = span / Math.max(count, 1);
  const power = Math.pow(10, Math.floor(Math.log10(raw)));
  for (const m of [1, 2, 2.5, 5, 10]) if (m * power >= raw) return m * power;
  return 10 * power;
}

function formatNumber(v) {
  if (v === 0) return "0";
  const a = Math.abs(v);
  if (a >= 1e4 || a < 1e-3) {
    const e = Math.floor(Math.log10(a));
    const m = v / Math.pow(10, e);
    // as Python writes it (the status line's 3.29e+25)
    return (Math.abs(m - Math.round(m)) < 1e-9 ? Math.round(m) : m.toFixed(1)) + "e" + (e < 0 ? "-" : "+") + String(Math.abs(e)).padStart(2, "0");
  }
  return String(Number(v.toPrecision(3)));
}

// Ticks of a linear axis: a handful of round numbers covering [lo, hi].
function linearTicks(lo, hi) {
  const step = niceStep(hi - lo, 4);
  const out = [];
  for (let v = Math.ceil(lo / step) * step; v <= hi + step * 1e-9; v += step) out.push(v);
  return out;
}

// Ticks of a log axis: decades, or 1-2-5 steps when the axis spans less than about two
// decades, so that every range has labelled ticks.
function logTicks(lo, hi) {
  const first = Math.floor(Math.log10(lo)), last = Math.ceil(Math.log10(hi));
  const mantissas = last - first <= 2 ? [1, 2, 5] : [1];
  const every = Math.max(1, Math.ceil((last - first) / 5));
  const out = [];
  for (let e = first; e <= last; e += every)
    for (const m of mantissas) {
      const v = m * Math.pow(10, e);
      if (v >= lo * (1 - 1e-9) && v <= hi * (1 + 1e-9)) out.push(v);
    }
  return out;
}

// The y range of a panel from its finite values (positive ones on a log axis), with a margin.
function yRange(values, log) {
  let lo = Infinity, hi = -Infinity;
  for (const v of values) {
    if (v === null || !isFinite(v) || (log && v <= 0)) continue;
    if (v < lo) lo = v;
    if (v > hi) hi = v;
  }
  if (lo === Infinity) return log ? [1e-3, 1] : [0, 1];
  if (log) {
    let a = Math.log10(lo), b = Math.log10(hi);
    if (b - a < 0.3) { a -= 0.15; b += 0.15; }
    const m = 0.06 * (b - a);
    return [Math.pow(10, a - m), Math.pow(10, b + m)];
  }
  if (hi - lo < 1e-12 * Math.max(1, Math.abs(hi))) { lo -= 0.5 * Math.abs(lo) || 0.5; hi += 0.5 * Math.abs(hi) || 0.5; }
  const m = 0.08 * (hi - lo);
  return [lo >= 0 && lo - m < 0 ? 0 : lo - m, hi + m];
}

// Numbers arrive as base64 strings of float32 bytes (compact, and NaN survives the trip).
function decode(text) {
  if (!text) return new Float32Array(0);
  const bytes = atob(text);
  const out = new Uint8Array(bytes.length);
  for (let i = 0; i < bytes.length; i++) out[i] = bytes.charCodeAt(i);
  return new Float32Array(out.buffer);
}

function decodeFrame(frame) {
  const panels = {};
  for (const id in frame.panels || {}) {
    const p = frame.panels[id];
    panels[id] = { hlines: p.hlines || [], lines: p.lines.map((l) => ({ ...l, y: decode(l.y) })) };
  }
  return { ...frame, x: decode(frame.x), panels };
}

function setupCanvas(canvas, width, height) {
  const ratio = window.devicePixelRatio || 1;
  if (canvas.width !== Math.round(width * ratio) || canvas.height !== Math.round(height * ratio)) {
    canvas.width = Math.round(width * ratio);
    canvas.height = Math.round(height * ratio);
    canvas.style.width = width + "px";
    canvas.style.height = height + "px";
  }
  const ctx = canvas.getContext("2d");
  ctx.setTransform(ratio, 0, 0, ratio, 0, 0);
  ctx.clearRect(0, 0, width, height);
  return ctx;
}

// A label with ``count`` more labels counted into it, by the template ``more``.
function withMore(more, text, count) {
  return count ? more.replace("{mark}", text).replace("{count}", String(count)) : text;
}

// Where the mark labels go in the lane: each starts at its mark (or ends at the plot's right
// edge when it would run past it) in the first row where it overlaps nothing; a label with no
// room in any row is counted into the label before it. A label that would touch the label of
// an earlier change of the same control (marks carry their ``control``) takes its place: after
// a burst of changes (a slider moved with four key presses) the lane shows the value in force,
// not the first value of the burst. Returns boxes {text, x, y, w, at, more}.
function placeLabels(marks, sx, measure, left, right, more = MORE) {
  const rows = Array.from({ length: LANE_ROWS }, () => []);
  const placed = [];
  const touches = (x, w, b) => x < b.x + b.w + 6 && b.x < x + w + 6;
  for (const m of [...marks].sort((a, b) => a.x - b.x)) {
    // room for a count (up to 99) is kept, so that counting labels in never makes it overlap
    const at = sx(m.x), w = measure(withMore(more, m.text, 99));
    const x = Math.max(left, Math.min(at + 3, right - w));
    let carried = 0;                                // labels counted into the one replaced
    const last = lastOfControl(placed, m.control);
    if (last && touches(x, w, last)) {
      placed.splice(placed.indexOf(last), 1);
      rows[last.row].splice(rows[last.row].indexOf(last), 1);
      carried = last.more;
    }
    const row = rows.findIndex((boxes) => boxes.every((b) => !touches(x, w, b)));
    if (row >= 0) {
      const box = { text: m.text, control: m.control, more: carried, x, y: 2 + row * LANE_ROW, w, at, row };
      rows[row].push(box);
      placed.push(box);
    } else if (placed.length) {
      placed[placed.length - 1].more += 1 + carried;   // no room: counted into the label before
    }
  }
  for (const box of placed) {
    box.text = withMore(more, box.text, box.more);
    box.w = measure(box.text);
  }
  return placed;
}

// The latest placed label of ``control`` (none for marks that name no control).
function lastOfControl(placed, control) {
  if (control === undefined || control === null) return null;
  for (let i = placed.length - 1; i >= 0; i--) if (placed[i].control === control) return placed[i];
  return null;
}

// One line panel: axes, frozen spans, markers, reference lines, the data lines, then the
// reference lines' labels (over the data, on a white box) and the marks' labels.
function drawPanel(canvas, panel, frame, width, { more = MORE, height = PANEL_HEIGHT } = {}) {
  const ctx = setupCanvas(canvas, width, height);
  const x = frame.x || [];
  const data = (frame.panels || {})[panel.id] || { lines: [], hlines: [] };
  const log = !!panel.log;
  const values = [];
  for (const line of data.lines) for (let i = 0; i < line.y.length; i++) values.push(line.y[i]);
  for (const h of data.hlines || []) values.push(h.y);
  const [y0, y1] = yRange(values, log);
  const x0 = x.length ? x[0] : 0;
  const x1 = x.length > 1 ? Math.max(x[x.length - 1], x0 + 10) : x0 + 10;
  const L = PAD.left, R = width - PAD.right, T = PAD.top, B = height - PAD.bottom;
  const sx = (v) => L + ((v - x0) / (x1 - x0)) * (R - L);
  const sy = log
    ? (v) => (v <= 0 ? B : B - ((Math.log10(v) - Math.log10(y0)) / (Math.log10(y1) - Math.log10(y0))) * (B - T))
    : (v) => B - ((v - y0) / (y1 - y0)) * (B - T);

  // frozen spans, in the colour of their layer
  if (panel.spans) {
    for (const s of frame.spans || []) {
      ctx.fillStyle = s.color;
      ctx.globalAlpha = 0.16;
      const a = Math.max(sx(s.x0), L), b = Math.min(sx(s.x1), R);
      if (b > a) ctx.fillRect(a, T, b - a, B - T);
    }
    ctx.globalAlpha = 1;
  }
  // grid and ticks
  ctx.font = SMALL;
  ctx.fillStyle = "#333";
  ctx.strokeStyle = "#e4e4e4";
  ctx.lineWidth = 1;
  ctx.textAlign = "right";
  ctx.textBaseline = "middle";
  const yt = log ? logTicks(y0, y1) : linearTicks(y0, y1);
  for (const v of yt) {
    const y = Math.round(sy(v)) + 0.5;
    if (log && panel.zero_floor && y > B - 14) continue;   // room for the 0 of the floor line
    ctx.beginPath(); ctx.moveTo(L, y); ctx.lineTo(R, y); ctx.stroke();
    ctx.fillText(formatNumber(v), L - 6, y);
  }
  if (log && panel.zero_floor) {
    // values of exactly 0 (a frozen layer's gradient) sit on this floor line, labelled 0
    ctx.strokeStyle = "#999";
    ctx.setLineDash([2, 3]);
    ctx.beginPath(); ctx.moveTo(L, B - 0.5); ctx.lineTo(R, B - 0.5); ctx.stroke();
    ctx.setLineDash([]);
    ctx.fillText("0", L - 6, B - 6);
  }
  ctx.textAlign = "center";
  ctx.textBaseline = "top";
  ctx.strokeStyle = "#e4e4e4";
  for (const v of linearTicks(x0, x1)) {
    if (v < x0 || v > x1 || Math.abs(v - Math.round(v)) > 1e-9) continue;
    const xx = Math.round(sx(v)) + 0.5;
    ctx.beginPath(); ctx.moveTo(xx, T); ctx.lineTo(xx, B); ctx.stroke();
    ctx.fillText(String(v), xx, B + 5);
  }
  ctx.strokeStyle = "#888";
  ctx.strokeRect(L + 0.5, T + 0.5, R - L, B - T);

  // reference lines (clip threshold, the 1e-3 ratio)
  for (const h of data.hlines || []) {
    const y = sy(h.y);
    if (y < T || y > B) continue;
    ctx.strokeStyle = h.color || "#555";
    ctx.lineWidth = 1.5;
    ctx.setLineDash([1, 3]);
    ctx.beginPath(); ctx.moveTo(L, y); ctx.lineTo(R, y); ctx.stroke();
    ctx.setLineDash([]);
  }
  // markers: the steps where a control changed
  ctx.save();
  ctx.beginPath(); ctx.rect(L, T, R - L, B - T); ctx.clip();
  for (const m of frame.markers || []) {
    if (m.x < x0 || m.x > x1) continue;
    const xx = sx(m.x);
    ctx.strokeStyle = MARK_COLOR; ctx.lineWidth = 1.2; ctx.setLineDash([4, 3]);
    ctx.beginPath(); ctx.moveTo(xx, T); ctx.lineTo(xx, B); ctx.stroke();
    ctx.setLineDash([]);
  }
  // the data lines
  for (const line of data.lines) {
    ctx.strokeStyle = line.color;
    ctx.lineWidth = line.width || 1.5;
    ctx.globalAlpha = line.alpha === undefined ? 1 : line.alpha;
    ctx.setLineDash(line.dash || []);
    ctx.beginPath();
    let pen = false;
    for (let i = 0; i < x.length; i++) {
      const v = line.y[i];
      if (v === null || v === undefined || !isFinite(v) || (log && v < 0)) { pen = false; continue; }
      const px = sx(x[i]), py = sy(v);
      if (pen) ctx.lineTo(px, py); else ctx.moveTo(px, py);
      pen = true;
    }
    ctx.stroke();
  }
  ctx.globalAlpha = 1;
  ctx.setLineDash([]);
  ctx.restore();
  const refBoxes = drawReferenceLabels(ctx, data.hlines || [], sy, T, B, R);
  // the marks' labels, in the lane above the plot, each with a tick over its mark
  ctx.font = SMALL; ctx.textAlign = "left"; ctx.textBaseline = "top";
  const shown = (frame.markers || []).filter((m) => m.x >= x0 && m.x <= x1);
  const boxes = placeLabels(shown, sx, (t) => ctx.measureText(t).width, L, R, more);
  for (const m of shown) {
    const xx = sx(m.x);
    ctx.strokeStyle = MARK_COLOR; ctx.lineWidth = 1.2;
    ctx.beginPath(); ctx.moveTo(xx, T - 4); ctx.lineTo(xx, T); ctx.stroke();
  }
  ctx.fillStyle = MARK_TEXT;
  for (const b of boxes) ctx.fillText(b.text, b.x, b.y);
  // for the tests and for anyone curious: where the labels went, and the plot's box
  canvas.dataset.markLabels = JSON.stringify(boxes.map((b) => ({ text: b.text, x: b.x, y: b.y, w: b.w, h: LANE_ROW })));
  canvas.dataset.plotBox = JSON.stringify({ left: L, right: R, top: T, bottom: B, width });
  canvas.dataset.refLabels = JSON.stringify(refBoxes);
}

// The labels of the reference lines ("clip threshold 1"), drawn after the data: a dozen
// gradient lines can run along the threshold, so each label sits on a white box, above its
// line at the right end (below it when the line is at the top). Returns the boxes.
function drawReferenceLabels(ctx, hlines, sy, top, bottom, right) {
  const boxes = [];
  ctx.font = SMALL; ctx.textAlign = "right"; ctx.textBaseline = "middle";
  for (const h of hlines) {
    const y = sy(h.y);
    if (!h.label || y < top || y > bottom) continue;
    const w = ctx.measureText(h.label).width + 8, hgt = 15;
    const y0 = y - 3 - hgt >= top ? y - 3 - hgt : Math.min(y + 3, bottom - hgt);
    const box = { text: h.label, x: right - 3 - w, y: y0, w, h: hgt };
    ctx.fillStyle = "rgba(255,255,255,0.92)";
    ctx.fillRect(box.x, box.y, w, hgt);
    ctx.fillStyle = "#333";
    ctx.fillText(h.label, right - 7, y0 + hgt / 2);
    boxes.push(box);
  }
  return boxes;
}

// The decision boundary: a grid of class probabilities (or classes) as an image, and the points.
function drawBoundary(canvas, spec, frame, width) {
  const side = Math.min(width, 360);
  const ctx = setupCanvas(canvas, side, side);
  const b = frame.boundary;
  const box = spec.boundary;
  if (!b || !box) return;
  const n = box.grid;
  const bytes = Uint8Array.from(atob(b.grid), (c) => c.charCodeAt(0));
  const image = ctx.createImageData(n, n);
  const palette = box.palette;  // [[r,g,b], ...] per class; two classes: a blend by probability
  for (let i = 0; i < n * n; i++) {
    // rows of the grid run upwards (y grows), rows of an image downwards
    const row = n - 1 - Math.floor(i / n), col = i % n, j = 4 * (row * n + col);
    let r, g, bl;
    if (b.mode === "probability") {
      const p = bytes[i] / 255, a = palette[0], c = palette[1];
      r = a[0] + (c[0] - a[0]) * p; g = a[1] + (c[1] - a[1]) * p; bl = a[2] + (c[2] - a[2]) * p;
    } else {
      const c = palette[bytes[i] % palette.length]; r = c[0]; g = c[1]; bl = c[2];
    }
    image.data[j] = 255 - 0.45 * (255 - r); image.data[j + 1] = 255 - 0.45 * (255 - g);
    image.data[j + 2] = 255 - 0.45 * (255 - bl); image.data[j + 3] = 255;
  }
  const off = document.createElement("canvas");
  off.width = n; off.height = n;
  off.getContext("2d").putImageData(image, 0, 0);
  ctx.imageSmoothingEnabled = true;
  ctx.drawImage(off, 0, 0, side, side);
  const [lx, hx, ly, hy] = box.extent;
  for (const [px, py, cls] of box.points) {
    const c = palette[cls % palette.length];
    ctx.fillStyle = `rgb(${c[0]},${c[1]},${c[2]})`;
    ctx.beginPath();
    ctx.arc(((px - lx) / (hx - lx)) * side, side - ((py - ly) / (hy - ly)) * side, 2.6, 0, 2 * Math.PI);
    ctx.fill();
  }
  ctx.strokeStyle = "#888";
  ctx.strokeRect(0.5, 0.5, side - 1, side - 1);
}

function render({ model, el }) {
  const root = document.createElement("div");
  root.className = "dltutor-chart";
  root.style.cssText = "display:grid;gap:10px 18px;width:100%;font:" + FONT + ";" +
    "grid-template-columns:repeat(auto-fill,minmax(min(100%,340px),1fr));";
  el.appendChild(root);
  const cells = {};
  let spec = null, pending = false, drawn = 0;

  function build() {
    spec = model.get("spec");
    root.innerHTML = "";
    for (const panel of [...spec.panels, ...(spec.boundary ? [{ id: "boundary", title: spec.boundary.title }] : [])]) {
      const cell = document.createElement("div");
      cell.style.cssText = "min-width:0";
      const title = document.createElement("div");
      title.style.cssText = "font:600 13px system-ui,sans-serif;margin:0 0 4px " + PAD.left + "px;color:#222";
      title.textContent = panel.title;
      const canvas = document.createElement("canvas");
      canvas.style.display = "block";
      cell.append(title, canvas);
      root.appendChild(cell);
      cells[panel.id] = { cell, title, canvas, panel };
    }
  }

  function draw() {
    pending = false;
    const frame = decodeFrame(model.get("frame") || {});
    for (const id in cells) {
      const { cell, canvas, panel, title } = cells[id];
      const width = Math.max(cell.clientWidth, 200);
      if (id === "boundary") {
        drawBoundary(canvas, spec, frame, width);
        if (frame.boundary) title.textContent = spec.boundary.title + " · " + frame.boundary.title;
      } else {
        drawPanel(canvas, panel, frame, width,
                  { more: spec.mark_more || MORE, height: panelHeight(root.clientWidth) });
      }
    }
    drawn += 1;
    el.dataset.frames = String(drawn);
    model.set("frames_drawn", drawn);
    model.save_changes();
  }

  function request() {
    if (!pending) { pending = true; requestAnimationFrame(draw); }
  }

  build();
  request();
  model.on("change:spec", () => { build(); request(); });
  model.on("change:frame", request);
  const observer = new ResizeObserver(request);
  observer.observe(root);
  return () => observer.disconnect();
}

export default { render };
