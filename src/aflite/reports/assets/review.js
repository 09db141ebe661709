// aflite report: the rows table (search, filters, sorting, pages) and the score map (hover,
// click). Reads the JSON in #af-data; every value from the data set goes through textContent,
// never through HTML. Filters run over column arrays and only one page of rows is drawn, so a
// page stays fast at 100,000 rows.
"use strict";
function afliteReview() {
  var P = JSON.parse(document.getElementById("af-data").textContent);
  var N = P.n, D = P.data, C = P.columns, PAGE = 50;
  var ONE = P.noun || "row", MANY = ONE + "s"; // "item" on a multiple-choice run
  var col = {};
  C.forEach(function (c) { col[c.key] = c; });
  var S = { q: "", gram: null, cats: {}, rangeKey: P.range || null, lo: null, hi: null,
            sortKey: null, dir: 1, page: 0, rows: [], pinned: -1 };

  function el(tag, text, cls) {
    var e = document.createElement(tag);
    if (text !== undefined && text !== null) e.textContent = String(text);
    if (cls) e.className = cls;
    return e;
  }
  function show(c, i) {
    var v = D[c.key][i];
    if (v === null || v === undefined) return "";
    if (c.kind === "cat") return c.values[v];
    if (c.kind === "num") return v.toFixed(3);
    return String(v);
  }
  var searchKeys = C.filter(function (c) { return c.search; }).map(function (c) { return c.key; });
  var lower = new Array(N);
  for (var i = 0; i < N; i++) {
    lower[i] = searchKeys.map(function (k) { return D[k][i] === null ? "" : D[k][i]; })
      .join("\n").toLowerCase();
  }
  // n-grams as the report counted them: lower-cased runs of a-z0-9 with inner - and '
  var tokenCache = {};
  function tokens(key) {
    if (!tokenCache[key]) {
      var out = new Array(N), re = /[a-z0-9]+(?:[-'][a-z0-9]+)*/g;
      for (var i = 0; i < N; i++) {
        var t = D[key][i] === null ? "" : String(D[key][i]).toLowerCase();
        out[i] = " " + (t.match(re) || []).join(" ") + " ";
      }
      tokenCache[key] = out;
    }
    return tokenCache[key];
  }

  // ---- controls ----
  var root = document.getElementById("af-review");
  var bar = el("div", null, "af-controls");
  var search = el("input");
  search.type = "search"; search.id = "af-search"; search.placeholder = "search the text";
  search.setAttribute("aria-label", "search the text");
  bar.appendChild(search);
  (P.filters || []).forEach(function (key) {
    var c = col[key], s = el("select");
    s.id = "af-f-" + key;
    s.setAttribute("aria-label", "filter by " + c.title);
    var all = el("option", "any " + c.title); all.value = "-1"; s.appendChild(all);
    c.values.forEach(function (v, code) {
      var o = el("option", c.title + ": " + v); o.value = String(code); s.appendChild(o);
    });
    s.addEventListener("change", function () { S.cats[key] = +s.value; update(); });
    bar.appendChild(s);
  });
  var nums = C.filter(function (c) { return c.kind === "num"; });
  if (nums.length) {
    var rs = el("select"); rs.id = "af-range-col"; rs.setAttribute("aria-label", "range column");
    nums.forEach(function (c) {
      var o = el("option", c.title); o.value = c.key; rs.appendChild(o);
    });
    if (S.rangeKey) rs.value = S.rangeKey; else S.rangeKey = nums[0].key;
    var lo = el("input"), hi = el("input");
    [lo, hi].forEach(function (x, j) {
      x.type = "number"; x.step = "0.01"; x.className = "af-num";
      x.id = j ? "af-max" : "af-min"; x.placeholder = j ? "max" : "min";
      x.setAttribute("aria-label", (j ? "maximum " : "minimum ") + "of the range column");
    });
    function range() {
      S.rangeKey = rs.value;
      S.lo = lo.value === "" ? null : +lo.value;
      S.hi = hi.value === "" ? null : +hi.value;
      update();
    }
    [rs, lo, hi].forEach(function (x) { x.addEventListener("input", range); });
    var group = el("span", null, "af-range"); // kept on one line
    [rs, lo, el("span", "to"), hi].forEach(function (x) { group.appendChild(x); });
    bar.appendChild(group);
  }
  var chip = el("button", null, "af-chip"); chip.type = "button"; chip.id = "af-gram";
  chip.hidden = true;
  chip.addEventListener("click", function () { S.gram = null; update(); });
  bar.appendChild(chip);
  root.appendChild(bar);
  var timer = null;
  search.addEventListener("input", function () {
    clearTimeout(timer);
    timer = setTimeout(function () { S.q = search.value.toLowerCase(); update(); }, 120);
  });

  var count = el("p", null, "muted"); count.id = "af-count"; root.appendChild(count);
  var wrap = el("div", null, "af-scroll"), table = el("table"), thead = el("thead");
  table.id = "af-table";
  var tbody = el("tbody"); tbody.id = "af-body";
  var hr = el("tr");
  C.forEach(function (c) {
    var th = el("th"), b = el("button", c.title, "af-sort");
    b.type = "button"; b.dataset.key = c.key;
    b.addEventListener("click", function () {
      S.dir = S.sortKey === c.key ? -S.dir : 1; S.sortKey = c.key; update();
    });
    th.appendChild(b); hr.appendChild(th);
  });
  thead.appendChild(hr); table.appendChild(thead); table.appendChild(tbody);
  wrap.appendChild(table); root.appendChild(wrap);
  var pager = el("div", null, "af-controls");
  var prev = el("button", "previous"), next = el("button", "next"), where = el("span");
  prev.type = next.type = "button"; prev.id = "af-prev"; next.id = "af-next"; where.id = "af-page";
  prev.addEventListener("click", function () { if (S.page > 0) { S.page--; render(); } });
  next.addEventListener("click", function () {
    if ((S.page + 1) * PAGE < S.rows.length) { S.page++; render(); }
  });
  pager.appendChild(prev); pager.appendChild(where); pager.appendChild(next);
  root.appendChild(pager);

  document.querySelectorAll("button.af-ngram").forEach(function (b) {
    b.addEventListener("click", function () {
      S.gram = { text: b.dataset.ngram, field: b.dataset.field || null };
      update();
      root.scrollIntoView();
    });
  });

  // ---- filtering, sorting, one page ----
  function passes(i, gramRows) {
    for (var key in S.cats) {
      if (S.cats[key] >= 0 && D[key][i] !== S.cats[key]) return false;
    }
    if (S.lo !== null || S.hi !== null) {
      var v = D[S.rangeKey][i];
      if (v === null || (S.lo !== null && v < S.lo) || (S.hi !== null && v > S.hi)) return false;
    }
    if (S.q && lower[i].indexOf(S.q) < 0) return false;
    if (gramRows && !gramRows(i)) return false;
    return true;
  }
  function gramTest() {
    if (!S.gram) return null;
    var needle = " " + S.gram.text + " ";
    var f = S.gram.field, keys = searchKeys;
    if (f) keys = C.filter(function (c) { return c.field === f; }).map(function (c) { return c.key; });
    var lists = keys.map(tokens);
    return function (i) {
      for (var j = 0; j < lists.length; j++) if (lists[j][i].indexOf(needle) >= 0) return true;
      return false;
    };
  }
  function update() {
    var g = gramTest(), rows = [];
    for (var i = 0; i < N; i++) if (passes(i, g)) rows.push(i);
    if (S.sortKey) {
      var v = D[S.sortKey], d = S.dir;
      rows.sort(function (a, b) {
        var x = v[a], y = v[b];
        if (x === y) return a - b;
        if (x === null) return 1;  // empty cells last in both directions
        if (y === null) return -1;
        return (x < y ? -1 : 1) * d;
      });
    }
    S.rows = rows; S.page = 0;
    chip.hidden = !S.gram;
    if (S.gram) chip.textContent = "n-gram: " + S.gram.text + (S.gram.field ? " (" + S.gram.field + ")" : "") + " \u00d7";
    document.querySelectorAll("button.af-sort").forEach(function (b) {
      b.setAttribute("aria-sort", b.dataset.key === S.sortKey ? (S.dir > 0 ? "ascending" : "descending") : "none");
      b.dataset.arrow = b.dataset.key === S.sortKey ? (S.dir > 0 ? " \u25b2" : " \u25bc") : "";
    });
    render();
    if (map) map.draw();
  }
  function render() {
    var rows = S.rows, start = S.page * PAGE, end = Math.min(rows.length, start + PAGE);
    var frag = document.createDocumentFragment();
    for (var r = start; r < end; r++) {
      var i = rows[r], tr = el("tr");
      tr.dataset.row = String(i);
      C.forEach(function (c) {
        tr.appendChild(el("td", show(c, i), c.kind === "num" ? "num" : (c.search ? "txt" : null)));
      });
      tr.addEventListener("click", function () { detail(+this.dataset.row); });
      frag.appendChild(tr);
    }
    tbody.replaceChildren(frag);
    count.textContent = rows.length + " of " + N + " " + MANY + " match";
    where.textContent = rows.length
      ? MANY + " " + (start + 1) + "\u2013" + end + " of " + rows.length + " (page " + (S.page + 1) + " of " + Math.ceil(rows.length / PAGE) + ")"
      : "no " + MANY;
    prev.disabled = S.page === 0; next.disabled = end >= rows.length;
  }
  var panel = document.getElementById("af-detail");
  function detail(i) {
    S.pinned = i;
    if (!panel) return;
    var dl = el("dl");
    C.forEach(function (c) { dl.appendChild(el("dt", c.title)); dl.appendChild(el("dd", show(c, i))); });
    panel.replaceChildren(el("b", ONE + " " + show(C[0], i)), dl);
    panel.hidden = false;
    if (map) map.draw();
  }

  // ---- the score map: a canvas scatter with hover and click ----
  var map = null, M = P.scatter, canvas = document.getElementById("af-map");
  if (M && canvas) map = scatter(canvas, document.getElementById("af-tip"));
  function scatter(cv, tip) {
    var xc = col[M.x], yc = col[M.y], cc = col[M.colour];
    var xs = D[M.x], ys = D[M.y], cs = D[M.colour];
    var pts = [];
    for (var i = 0; i < N; i++) if (xs[i] !== null && ys[i] !== null) pts.push(i);
    var xmin = Infinity, xmax = -Infinity, ymin = Infinity, ymax = -Infinity;
    pts.forEach(function (i) {
      xmin = Math.min(xmin, xs[i]); xmax = Math.max(xmax, xs[i]);
      ymin = Math.min(ymin, ys[i]); ymax = Math.max(ymax, ys[i]);
    });
    if (xc.kind === "cat") { xmin -= 0.5; xmax += 0.5; }
    if (M.yUnit) { ymin = Math.min(0, ymin); ymax = Math.max(1, ymax); }
    if (xmax <= xmin) { xmin -= 1; xmax += 1; }
    if (ymax <= ymin) { ymin -= 1; ymax += 1; }
    var palette = ["#2b6cb0", "#dd6b20", "#38a169", "#805ad5", "#d53f8c", "#718096", "#b7791f", "#319795"];
    var L = 64, R = 16, T = 16, B = 52, px = new Float32Array(N), py = new Float32Array(N), W = 0, H = 0;
    function jitter(i) { // fixed per row, so points do not move between draws
      var h = Math.sin(i * 12.9898) * 43758.5453; return (h - Math.floor(h) - 0.5) * 0.7;
    }
    function layout() {
      var ratio = window.devicePixelRatio || 1;
      W = cv.clientWidth; H = cv.clientHeight;
      cv.width = W * ratio; cv.height = H * ratio;
      cv.getContext("2d").setTransform(ratio, 0, 0, ratio, 0, 0);
      pts.forEach(function (i) {
        var x = xs[i] + (xc.kind === "cat" ? jitter(i) : 0);
        px[i] = L + (x - xmin) / (xmax - xmin) * (W - L - R);
        py[i] = T + (1 - (ys[i] - ymin) / (ymax - ymin)) * (H - T - B);
      });
    }
    function draw() {
      var g = cv.getContext("2d"), on = new Uint8Array(N);
      S.rows.forEach(function (i) { on[i] = 1; });
      g.clearRect(0, 0, W, H);
      g.fillStyle = "#1d232a"; g.strokeStyle = "#cbd2d9"; g.font = "13px system-ui,sans-serif";
      g.textAlign = "right"; g.textBaseline = "middle";
      for (var k = 0; k <= 4; k++) {
        var v = ymin + (ymax - ymin) * k / 4, y = T + (1 - k / 4) * (H - T - B);
        g.beginPath(); g.moveTo(L, y); g.lineTo(W - R, y); g.stroke();
        g.fillText(v.toFixed(2), L - 6, y);
      }
      g.textAlign = "center"; g.textBaseline = "top";
      var ticks = [];
      if (xc.kind === "cat") {
        for (var c = Math.ceil(xmin); c <= xmax; c++) ticks.push([c, xc.values[c]]);
      } else {
        for (k = 0; k <= 5; k++) { var xv = xmin + (xmax - xmin) * k / 5; ticks.push([xv, xv.toFixed(2)]); }
      }
      var step = Math.max(1, Math.ceil(ticks.length * 60 / (W - L - R)));
      ticks.forEach(function (t, j) {
        if (j % step) return;
        g.fillText(t[1], L + (t[0] - xmin) / (xmax - xmin) * (W - L - R), H - B + 6);
      });
      g.fillText(M.xTitle, L + (W - L - R) / 2, H - 22);
      g.save(); g.translate(16, T + (H - T - B) / 2); g.rotate(-Math.PI / 2);
      g.fillText(M.yTitle, 0, -6); g.restore();
      g.globalAlpha = 0.25; g.fillStyle = "#a0aec0";
      pts.forEach(function (i) { if (!on[i]) g.fillRect(px[i] - 1.5, py[i] - 1.5, 3, 3); });
      g.globalAlpha = 0.7;
      pts.forEach(function (i) {
        if (!on[i]) return;
        g.fillStyle = cs[i] === null ? "#718096" : palette[cs[i] % palette.length];
        g.fillRect(px[i] - 2, py[i] - 2, 4, 4);
      });
      g.globalAlpha = 1;
      if (S.pinned >= 0 && xs[S.pinned] !== null && ys[S.pinned] !== null) {
        g.strokeStyle = "#000"; g.lineWidth = 2; g.beginPath();
        g.arc(px[S.pinned], py[S.pinned], 7, 0, 2 * Math.PI); g.stroke(); g.lineWidth = 1;
      }
    }
    function nearest(ev) {
      var r = cv.getBoundingClientRect(), x = ev.clientX - r.left, y = ev.clientY - r.top;
      var best = -1, bd = 64; // within 8 px
      var on = new Uint8Array(N);
      S.rows.forEach(function (i) { on[i] = 1; });
      pts.forEach(function (i) {
        if (!on[i]) return;
        var d = (px[i] - x) * (px[i] - x) + (py[i] - y) * (py[i] - y);
        if (d < bd) { bd = d; best = i; }
      });
      return [best, x, y];
    }
    cv.addEventListener("mousemove", function (ev) {
      var n = nearest(ev), i = n[0];
      if (i < 0) { tip.hidden = true; return; }
      var lines = C.map(function (c) { return c.title + ": " + show(c, i); });
      tip.replaceChildren();
      lines.forEach(function (s) { tip.appendChild(el("div", s)); });
      tip.dataset.row = String(i);
      tip.hidden = false;
      tip.style.left = Math.min(n[1] + 14, W - 320) + "px"; tip.style.top = (n[2] + 14) + "px";
    });
    cv.addEventListener("mouseleave", function () { tip.hidden = true; });
    cv.addEventListener("click", function (ev) { var i = nearest(ev)[0]; if (i >= 0) detail(i); });
    var legend = document.getElementById("af-legend");
    if (legend) {
      cc.values.forEach(function (v, code) {
        var s = el("span", null, "af-key"), dot = el("i");
        dot.style.background = palette[code % palette.length];
        s.appendChild(dot); s.appendChild(document.createTextNode(v));
        legend.appendChild(s);
      });
    }
    window.addEventListener("resize", function () { layout(); draw(); });
    layout();
    return { draw: draw };
  }
  update();
}
// the why-removed n-grams come after the script in the page: start once all of it is parsed
if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", afliteReview);
else afliteReview();
