"use strict";
// ragmeter report: renders the sample table from the embedded JSON.
// Every value from the data is put in the page with textContent or as a DOM property: never innerHTML.
(function () {
  var DATA = JSON.parse(document.getElementById("ragmeter-data").textContent);
  var METRICS = DATA.metrics, SAMPLES = DATA.samples, PAGE = 100;
  var state = { key: null, dir: 1, page: 0, open: {}, view: [] };
  var $ = function (id) { return document.getElementById(id); };

  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }
  function fmt(v) {
    if (v === null || v === undefined) return "—";
    if (typeof v === "number") return Number.isInteger(v) ? String(v) : v.toFixed(3);
    if (typeof v === "boolean") return v ? "yes" : "no";
    return String(v);
  }
  function count(n) { return n.toLocaleString("en-US"); }
  function score(s, m) { var r = s.m[m]; return r && typeof r.s === "number" && !r.e ? r.s : null; }
  function delta(s, m) {
    var a = score(s, m), b = s.b ? s.b[m] : null;
    return a === null || b === null || b === undefined ? null : a - b;
  }
  function status(r) { return !r ? "missing" : r.e ? "error" : r.s === null || r.s === undefined ? "undefined" : "scored"; }

  // ---- columns -------------------------------------------------------------------------------------
  var COLS = [{ key: "id", label: "id", get: function (s) { return s.id; } }];
  if (DATA.hasText) COLS.push({ key: "q", label: "query", get: function (s) { return s.q || ""; } });
  METRICS.forEach(function (m) {
    COLS.push({ key: "m:" + m, label: m, metric: m, get: function (s) { return score(s, m); } });
    if (DATA.compare) COLS.push({ key: "d:" + m, label: "Δ " + m, delta: m, get: function (s) { return delta(s, m); } });
  });
  COLS.push({ key: "err", label: "errors", get: function (s) { return s.x ? 1 : 0; } });

  function compare(col, dir) {
    return function (i, j) {
      var a = col.get(SAMPLES[i]), b = col.get(SAMPLES[j]);
      if (a === null && b === null) return i - j;
      if (a === null) return 1;           // no score: always last
      if (b === null) return -1;
      var c = typeof a === "number" && typeof b === "number" ? a - b : String(a).localeCompare(String(b), undefined, { numeric: true });
      return c !== 0 ? c * dir : i - j;
    };
  }

  // ---- filtering -----------------------------------------------------------------------------------
  function num(input) { var v = input.value.trim(); return v === "" || isNaN(Number(v)) ? null : Number(v); }
  function computeView() {
    var text = $("f-text").value.trim().toLowerCase(), m = $("f-metric").value;
    var lo = num($("f-min")), hi = num($("f-max")), errOnly = $("f-errors").checked;
    var view = [];
    for (var i = 0; i < SAMPLES.length; i++) {
      var s = SAMPLES[i];
      if (errOnly && !s.x) continue;
      if (text && s.id.toLowerCase().indexOf(text) < 0 && (s.q || "").toLowerCase().indexOf(text) < 0) continue;
      if (m && (lo !== null || hi !== null)) {
        var v = score(s, m);
        if (v === null || (lo !== null && v < lo) || (hi !== null && v > hi)) continue;
      }
      view.push(i);
    }
    if (state.key) {
      var col = COLS.filter(function (c) { return c.key === state.key; })[0];
      if (col) view.sort(compare(col, state.dir));
    }
    state.view = view;
  }

  // ---- header --------------------------------------------------------------------------------------
  function renderHead() {
    var tr = $("sample-head");
    tr.textContent = "";
    COLS.forEach(function (c) {
      var th = el("th");
      th.scope = "col";
      th.dataset.key = c.key;
      if (state.key === c.key) th.setAttribute("aria-sort", state.dir > 0 ? "ascending" : "descending");
      var b = el("button", null, c.label);
      b.type = "button";
      b.title = "sort by " + c.label;
      b.addEventListener("click", function () {
        if (state.key === c.key) state.dir = -state.dir;
        else { state.key = c.key; state.dir = c.metric || c.delta || c.key === "err" ? -1 : 1; }
        state.page = 0;
        update();
      });
      th.appendChild(b);
      tr.appendChild(th);
    });
  }

  // ---- rows ----------------------------------------------------------------------------------------
  function scoreCell(s, m) {
    var td = el("td", "num"), r = s.m[m], st = status(r), v = score(s, m);
    if (st === "error") { td.appendChild(el("span", "badge err", "error")); td.title = r.e.type + ": " + r.e.message; }
    else if (st === "undefined") { td.appendChild(el("span", "badge undef", "undef")); td.title = r.t || ""; }
    else if (st === "missing") td.textContent = "—";
    else {
      td.appendChild(document.createTextNode(v.toFixed(3)));
      var bar = el("span", "scorebar"), fill = el("span");
      fill.style.width = Math.max(0, Math.min(1, v)) * 100 + "%";
      bar.appendChild(fill);
      td.appendChild(bar);
    }
    return td;
  }
  function deltaCell(s, m) {
    var d = delta(s, m), td = el("td", "num");
    if (d === null) { td.textContent = "—"; return td; }
    td.textContent = (d > 0 ? "+" : "") + d.toFixed(3);
    if (d > 0) td.classList.add("good"); else if (d < 0) td.classList.add("bad");
    return td;
  }
  function renderBody() {
    panelWidth();
    var body = $("sample-body");
    body.textContent = "";
    var n = state.view.length, pages = Math.max(1, Math.ceil(n / PAGE));
    state.page = Math.min(state.page, pages - 1);
    var start = state.page * PAGE, stop = Math.min(n, start + PAGE);
    if (n === 0) {
      var tr0 = el("tr"), td0 = el("td", "empty", "No sample matches the filters.");
      td0.colSpan = COLS.length;
      tr0.appendChild(td0);
      body.appendChild(tr0);
    }
    for (var k = start; k < stop; k++) {
      var i = state.view[k], s = SAMPLES[i], tr = el("tr", "row" + (s.x ? " has-err" : ""));
      tr.tabIndex = 0;
      tr.dataset.index = String(i);
      tr.setAttribute("aria-expanded", state.open[i] ? "true" : "false");
      COLS.forEach(function (c) {
        if (c.metric) tr.appendChild(scoreCell(s, c.metric));
        else if (c.delta) tr.appendChild(deltaCell(s, c.delta));
        else if (c.key === "err") {
          var td = el("td", "num");
          if (s.x) td.appendChild(el("span", "badge err", "error"));
          tr.appendChild(td);
        } else {
          var t = el("td", c.key === "id" ? "id" : "q", c.get(s));
          t.title = c.get(s);
          tr.appendChild(t);
        }
      });
      tr.addEventListener("click", toggle);
      tr.addEventListener("keydown", function (ev) {
        if (ev.key === "Enter" || ev.key === " ") { ev.preventDefault(); toggle.call(this); }
      });
      body.appendChild(tr);
      if (state.open[i]) { tr.classList.add("open"); body.appendChild(detailRow(s)); }
    }
    var held = DATA.total && DATA.total > SAMPLES.length ? " (of " + count(DATA.total) + " in the run)" : "";
    $("count").textContent = (n === SAMPLES.length
      ? count(SAMPLES.length) + " samples"
      : count(n) + " of " + count(SAMPLES.length) + " samples match") + held;
    $("p-info").textContent = "page " + count(state.page + 1) + " of " + count(pages) +
      (n ? " (rows " + count(start + 1) + "–" + count(stop) + ")" : "");
    $("p-first").disabled = $("p-prev").disabled = state.page === 0;
    $("p-next").disabled = $("p-last").disabled = state.page >= pages - 1;
  }
  function toggle() {
    var i = Number(this.dataset.index);
    if (state.open[i]) delete state.open[i]; else state.open[i] = true;
    renderBody();
  }

  // ---- the expanded sample -------------------------------------------------------------------------
  function field(title, text, full) {
    var d = el("div", "field" + (full ? " full" : ""));
    d.appendChild(el("h4", null, title));
    if (text === null || text === undefined || text === "") d.appendChild(el("p", "missing", DATA.hasText ? "(none)" : "(not available: pass --data)"));
    else d.appendChild(el("pre", "text", text));
    return d;
  }
  function relevantInfo(s) {
    var ranks = {}, how = [];
    Object.keys(s.m).forEach(function (m) {
      var r = s.m[m], det = r && r.d !== null && r.d !== undefined && s.d ? s.d[r.d] : null;
      if (!det) return;
      (det.relevant_ranks || []).forEach(function (k) { ranks[k] = true; });
      if (Array.isArray(det.matched_by) && !how.length) how = det.matched_by;
    });
    return { ranks: ranks, how: how };
  }
  function contextsField(s) {
    var d = el("div", "field full"), ctx = s.c || [], info = relevantInfo(s);
    d.appendChild(el("h4", null, "Contexts (" + ctx.length + " retrieved, " + Object.keys(info.ranks).length + " relevant)"));
    if (!ctx.length) { d.appendChild(el("p", "missing", DATA.hasText ? "(no contexts)" : "(not available: pass --data)")); return d; }
    var ol = el("ol", "contexts"), seen = {};
    ctx.forEach(function (c, k) {
      var rank = k + 1, rel = !!info.ranks[rank], li = el("li", rel ? "relevant" : "");
      li.dataset.rank = String(rank);
      var head = el("div", "ctx-head");
      head.appendChild(el("strong", null, "#" + rank));
      if (rel) head.appendChild(el("span", "badge rel", "relevant"));
      if (rel && info.how[k]) head.appendChild(el("span", null, "matched by " + info.how[k]));
      if (c[0] !== null && c[0] !== undefined) head.appendChild(el("span", null, "id " + c[0]));
      if (c[2] !== null && c[2] !== undefined) head.appendChild(el("span", null, "score " + fmt(c[2])));
      li.appendChild(head);
      var cm = (s.cm || [])[k];
      if (cm && Object.keys(cm).length) li.appendChild(kv(cm));
      var ctext = el("div", "ctx-text", c[1] === null || c[1] === undefined ? "(id only)" : c[1]), spans = evidenceOf(s, k);
      if (spans && typeof c[1] === "string") { ctext.textContent = ""; ctext.appendChild(marked(c[1], spans, evidenceMark(s, seen))); }
      li.appendChild(ctext);
      ol.appendChild(li);
    });
    d.appendChild(ol);
    return d;
  }
  // ---- the checked claims in the answer and their evidence in the contexts (report/_evidence.py) -----
  // s.ev: {m: metric, k: [[class, p_yes, support, veto, spans, shown, text?]], a: answer segments,
  // c: [[context index, segments]], n: notes}; a segment is [start, end, keys, opens, closes].
  // Each piece of text goes in with textContent; links are plain #anchors (no script needed to follow them).
  var SUPPORT = { supported: "✓", doubtful: "?", unsupported: "✗" };
  function claimOf(s, n) { var k = s.ev.k[n - 1]; return k ? { cls: k[0], p: k[1], support: k[2], veto: k[3], spans: k[4], shown: k[5], text: k[6] } : null; }
  function claimWords(s, n) {
    var c = claimOf(s, n);
    return "claim " + n + ": " + c.cls + (c.veto ? " (vetoed)" : "") + ", P(yes) " + fmt(c.p) + ", support " + fmt(c.support);
  }
  function evidenceOf(s, k) {
    var found = s.ev ? s.ev.c.filter(function (e) { return e[0] === k; })[0] : null;
    return found ? found[1] : null;
  }
  function marked(text, segs, draw) {
    var out = document.createDocumentFragment(), at = 0;
    segs.forEach(function (g) {
      if (!(g[0] >= at && g[1] <= text.length && g[0] < g[1])) return;
      if (g[0] > at) out.appendChild(document.createTextNode(text.slice(at, g[0])));
      out.appendChild(draw(text.slice(g[0], g[1]), g));
      at = g[1];
    });
    if (at < text.length) out.appendChild(document.createTextNode(text.slice(at)));
    return out;
  }
  function numbers(keys) { return keys.filter(function (x) { return typeof x === "number"; }); }
  // nested marks, the first key outermost; an id on the mark of each claim whose first span opens here
  function nest(piece, claims, make) {
    var node = document.createTextNode(piece);
    for (var j = claims.length - 1; j >= 0; j--) { var m = make(claims[j]); m.appendChild(node); node = m; }
    return node;
  }
  function claimMark(s) {
    return function (piece, g) {
      var f = document.createDocumentFragment(), claims = numbers(g[2]);
      if (!claims.length) {
        var kind = g[2].join(", "), plain = el("span", "not-claim", piece);
        plain.title = "not a claim: " + kind;
        plain.dataset.kind = kind;
        f.appendChild(plain);
        return f;
      }
      f.appendChild(nest(piece, claims, function (n) {
        var m = el("mark", "claim s-" + claimOf(s, n).cls);
        m.dataset.claim = String(n);
        m.title = claimWords(s, n);
        if (g[3].indexOf(n) >= 0) { m.id = "claim-" + s.i + "-" + n; m.tabIndex = -1; }
        return m;
      }));
      numbers(g[4]).forEach(function (n) {
        var c = claimOf(s, n), sup = el("sup", "claim-ref s-" + c.cls);
        var ref = el(c.shown ? "a" : "span", null, n + SUPPORT[c.cls]);
        if (c.shown) ref.href = "#ev-" + s.i + "-" + n;
        ref.setAttribute("aria-label", claimWords(s, n) + (c.shown ? "; go to its evidence" : "; no evidence shown"));
        ref.title = ref.getAttribute("aria-label");
        sup.appendChild(ref);
        f.appendChild(sup);
      });
      return f;
    };
  }
  function evidenceMark(s, seen) {
    return function (piece, g) {
      var f = document.createDocumentFragment(), claims = numbers(g[2]);
      f.appendChild(nest(piece, claims, function (n) {
        var m = el("mark", "evidence s-" + claimOf(s, n).cls);
        m.dataset.claim = String(n);
        m.title = "evidence of " + claimWords(s, n);
        if (g[3].indexOf(n) >= 0 && !seen[n]) { seen[n] = true; m.id = "ev-" + s.i + "-" + n; m.tabIndex = -1; }
        return m;
      }));
      numbers(g[4]).forEach(function (n) {
        var sup = el("sup", "ev-ref"), back = el("a", null, String(n));
        back.href = "#claim-" + s.i + "-" + n;
        back.setAttribute("aria-label", "evidence of claim " + n + "; back to the claim");
        sup.appendChild(back);
        f.appendChild(sup);
      });
      return f;
    };
  }
  function answerField(s) {
    var d = field("Answer", s.a);
    if (!s.ev || typeof s.a !== "string") return d;
    var pre = d.querySelector("pre");
    pre.classList.add("marked");
    pre.textContent = "";
    pre.appendChild(marked(s.a, s.ev.a, claimMark(s)));
    var ol = el("ol", "claims");
    s.ev.k.forEach(function (k, j) {
      var n = j + 1, c = claimOf(s, n), li = el("li", "s-" + c.cls);
      // a claim in the judge's own words (mode=claims): its text, then its verdict
      if (typeof c.text === "string") { li.appendChild(el("q", "claim-text", c.text)); li.appendChild(document.createTextNode(" ")); }
      li.appendChild(el("span", "claim-word", SUPPORT[c.cls] + " " + c.cls));
      li.appendChild(document.createTextNode(" · P(yes) " + fmt(c.p) + " · support " + fmt(c.support) + (c.veto ? " · vetoed by the offline check" : "") + " · "));
      if (c.shown) { var a = el("a", null, "evidence"); a.href = "#ev-" + s.i + "-" + n; li.appendChild(a); }
      else li.appendChild(el("span", "muted", c.spans ? "evidence not shown" : "no evidence recorded"));
      ol.appendChild(li);
    });
    d.appendChild(el("p", "muted small", "Claims checked by " + s.ev.m + " (" + DATA.claimScale + "):"));
    d.appendChild(ol);
    var kinds = {};
    s.ev.a.forEach(function (g) { if (!numbers(g[2]).length) g[2].forEach(function (x) { kinds[x] = (kinds[x] || 0) + 1; }); });
    var ks = Object.keys(kinds);
    if (ks.length) d.appendChild(el("p", "muted small", "Not claims (shown plain): " + ks.map(function (x) { return x + " (" + kinds[x] + ")"; }).join(", ")));
    s.ev.n.forEach(function (t) { d.appendChild(el("p", "note small", t)); });
    return d;
  }
  var VERDICT_KEY = /verdict|support|relevan|faithful|correct|attribut|entail|grounded|rating/i;
  var YES = { "yes": 1, "true": 1, "supported": 1, "relevant": 1, "correct": 1, "entailed": 1, "1": 1 };
  var NO = { "no": 1, "false": 1, "unsupported": 1, "irrelevant": 1, "incorrect": 1, "contradicted": 1, "0": 1 };
  function valueNode(v, key) {
    if (v !== null && typeof v === "object") {
      if (Array.isArray(v) && v.length && v.every(function (x) { return x !== null && typeof x === "object" && !Array.isArray(x); })) return objTable(v);
      if (Array.isArray(v) && v.every(function (x) { return x === null || typeof x !== "object"; })) return el("span", null, v.map(fmt).join(", ") || "[]");
      if (!Array.isArray(v)) return kv(v);
      return el("code", null, JSON.stringify(v));
    }
    var span = el("span", null, fmt(v));
    if (key && VERDICT_KEY.test(key) && typeof v !== "number") {
      var t = String(v).toLowerCase();
      if (YES[t]) span.className = "v-yes"; else if (NO[t]) span.className = "v-no";
    }
    return span;
  }
  function objTable(rows) {
    var keys = [];
    rows.forEach(function (r) { Object.keys(r).forEach(function (k) { if (keys.indexOf(k) < 0) keys.push(k); }); });
    var t = el("table", "mini"), hr = el("tr");
    keys.forEach(function (k) { hr.appendChild(el("th", null, k)); });
    var th = el("thead"); th.appendChild(hr); t.appendChild(th);
    var tb = el("tbody");
    rows.slice(0, 200).forEach(function (r) {
      var tr = el("tr");
      keys.forEach(function (k) { var td = el("td"); td.appendChild(valueNode(r[k], k)); tr.appendChild(td); });
      tb.appendChild(tr);
    });
    t.appendChild(tb);
    var wrap = el("div", "mini-wrap");
    wrap.appendChild(t);
    return wrap;
  }
  function kv(obj) {
    var dl = el("dl", "kv inner");
    Object.keys(obj).forEach(function (k) {
      dl.appendChild(el("dt", null, k));
      var dd = el("dd"); dd.appendChild(valueNode(obj[k], k)); dl.appendChild(dd);
    });
    return dl;
  }
  function resultsField(s) {
    var d = el("div", "field full");
    d.appendChild(el("h4", null, "Metric results"));
    var t = el("table", "mres"), hr = el("tr");
    ["metric", "score"].concat(DATA.compare ? ["baseline"] : []).concat(["reason", "details"]).forEach(function (h) { hr.appendChild(el("th", null, h)); });
    var th = el("thead"); th.appendChild(hr); t.appendChild(th);
    var tb = el("tbody"), shown = {};
    METRICS.forEach(function (m) {
      var r = s.m[m], st = status(r), tr = el("tr");
      tr.appendChild(el("th", "mname", m));
      var sc = el("td", "num");
      sc.dataset.label = "score";
      if (st === "error") sc.appendChild(el("span", "badge err", "error"));
      else if (st === "undefined") sc.appendChild(el("span", "badge undef", "undefined"));
      else sc.textContent = r && typeof r.s === "number" ? r.s.toFixed(3) : "—";
      tr.appendChild(sc);
      if (DATA.compare) {
        var bv = s.b ? s.b[m] : null;
        var bt = el("td", "num", typeof bv === "number" ? bv.toFixed(3) : "—");
        bt.dataset.label = "baseline";
        tr.appendChild(bt);
      }
      var reason = el("td", "reason");
      reason.dataset.label = "reason";
      if (r && r.e) reason.appendChild(el("div", "bad", r.e.type + ": " + r.e.message));
      if (r && r.t) reason.appendChild(el("div", null, r.t));
      tr.appendChild(reason);
      var dt = el("td", "details");
      dt.dataset.label = "details";
      if (r && r.d !== null && r.d !== undefined && s.d) {
        if (shown[r.d]) dt.appendChild(el("span", "muted", "same as " + shown[r.d]));
        else { shown[r.d] = m; dt.appendChild(kv(s.d[r.d])); }
      }
      tr.appendChild(dt);
      tb.appendChild(tr);
    });
    t.appendChild(tb);
    d.appendChild(t);
    return d;
  }
  // the baseline's contexts beside the run's, and its answer where it differs (report/_compare.py)
  function baselineFields(s) {
    var d = s.bc ? contextsField({ c: s.bc, m: {} }) : el("div");
    d.className = "field baseline";
    if (s.bc) d.firstChild.textContent = "Baseline contexts (" + s.bc.length + " retrieved)";
    else {
      d.appendChild(el("h4", null, "Baseline contexts"));
      d.appendChild(el("p", "missing", s.bsame ? "(the same as this run's)" : DATA.baseText
        ? "(this sample is not in the baseline's data file)" : "(not available: the baseline's data file was not found)"));
    }
    return s.ba === undefined ? [d] : [d, field("Baseline answer", s.ba, true)];
  }
  // The expanded sample is a panel as wide as the visible table area (not the table, which can be
  // far wider with many metrics): sticky at the left edge, its width the scroll container's.
  function panelWidth() {
    var wrap = document.querySelector(".table-wrap");
    if (wrap) document.documentElement.style.setProperty("--panel-w", wrap.clientWidth + "px");
  }
  function detailRow(s) {
    var tr = el("tr", "detail"), td = el("td"), panel = el("div", "detail-panel"), grid = el("div", "detail-grid");
    td.colSpan = COLS.length;
    var idf = el("div", "field full");
    idf.appendChild(el("h4", null, "Sample"));
    idf.appendChild(el("code", null, s.id));
    if (s.w && s.w.length) idf.appendChild(el("span", "muted why-shown", " shown because: " + s.w.join(", ")));
    grid.appendChild(idf);
    grid.appendChild(field("Query", s.q, true));
    grid.appendChild(answerField(s));
    grid.appendChild(field("Reference", s.r));
    if (s.meta) { var mf = el("div", "field full"); mf.appendChild(el("h4", null, "Metadata")); mf.appendChild(kv(s.meta)); grid.appendChild(mf); }
    grid.appendChild(contextsField(s));
    if (DATA.compare) { grid.lastChild.classList.remove("full"); baselineFields(s).forEach(function (f) { grid.appendChild(f); }); }
    grid.appendChild(resultsField(s));
    panel.appendChild(grid);
    td.appendChild(panel);
    tr.appendChild(td);
    return tr;
  }

  // ---- wiring --------------------------------------------------------------------------------------
  function update() { computeView(); renderHead(); renderBody(); }
  var sel = $("f-metric");
  sel.appendChild(el("option", null, "(choose)")).value = "";
  METRICS.forEach(function (m) { var o = el("option", null, m); o.value = m; sel.appendChild(o); });
  if (METRICS.length) sel.value = METRICS[0];
  ["f-text", "f-min", "f-max"].forEach(function (id) { $(id).addEventListener("input", function () { state.page = 0; update(); }); });
  ["f-metric", "f-errors"].forEach(function (id) { $(id).addEventListener("change", function () { state.page = 0; update(); }); });
  $("controls").addEventListener("submit", function (ev) { ev.preventDefault(); });
  $("controls").addEventListener("reset", function () {
    setTimeout(function () { if (METRICS.length) sel.value = METRICS[0]; state.page = 0; update(); }, 0);
  });
  function pages() { return Math.max(1, Math.ceil(state.view.length / PAGE)); }
  $("p-first").addEventListener("click", function () { state.page = 0; renderBody(); });
  $("p-prev").addEventListener("click", function () { state.page = Math.max(0, state.page - 1); renderBody(); });
  $("p-next").addEventListener("click", function () { state.page = Math.min(pages() - 1, state.page + 1); renderBody(); });
  $("p-last").addEventListener("click", function () { state.page = pages() - 1; renderBody(); });
  Array.prototype.forEach.call(document.querySelectorAll("a.jump"), function (a) {
    a.addEventListener("click", function (ev) {
      ev.preventDefault();
      var i = Number(a.dataset.index);
      if (!(i >= 0)) return;
      $("controls").reset();
      $("f-text").value = SAMPLES[i].id;
      state.open[i] = true;
      state.page = 0;
      update();
      var row = document.querySelector('tr.row[data-index="' + i + '"]');
      if (row) row.scrollIntoView({ block: "start" });
    });
  });
  window.addEventListener("resize", panelWidth);
  update();
  document.documentElement.dataset.ready = "1";
})();
