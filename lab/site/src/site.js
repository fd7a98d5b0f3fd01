// The results page's scripts: the response/service switch of the matrix, the
// CDF charts of a cell's page, the comparison picker, and a sweep's charts. The pages read
// without them; everything here works from file:// (its data is in the pages).
(function () {
  "use strict";
  document.documentElement.classList.add("js");

  function el(tag, attrs, text) {
    var e = document.createElement(tag);
    for (var k in attrs || {}) e.setAttribute(k, attrs[k]);
    if (text !== undefined) e.textContent = text;
    return e;
  }
  function esc(s) {
    return String(s).replace(/[&<>"']/g, function (c) {
      return { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" }[c];
    });
  }

  // ---- The matrix: open cells in response time (default) or service time.
  function setView(view) {
    document.querySelectorAll("table.matrix td[data-service]").forEach(function (td) {
      td.dataset.view = view;
      var p = td.querySelector(".p50");
      if (p) p.textContent = td.getAttribute("data-" + view);
      var t = td.querySelector(".tail");
      if (t) t.textContent = " " + td.getAttribute("data-tail-" + view);
      td.title = view + " " + td.getAttribute("data-tail-" + view);
    });
    document.querySelectorAll(".view-name").forEach(function (s) {
      s.textContent = view === "response" ? "response time (from the scheduled slot)" : "service time (from the actual send)";
    });
    document.querySelectorAll(".switch button").forEach(function (b) {
      b.setAttribute("aria-pressed", b.dataset.view === view ? "true" : "false");
    });
    var u = new URL(window.location.href);
    if (view === "service") u.searchParams.set("view", "service");
    else u.searchParams.delete("view");
    try { history.replaceState(null, "", u.toString()); } catch (e) { /* file:// in some browsers */ }
  }
  function initSwitch() {
    var tools = document.querySelector(".matrix-tools[data-open='1']");
    if (!tools) return;
    var sw = el("div", { class: "switch", role: "group", "aria-label": "open cells show" });
    sw.appendChild(el("span", {}, "Open cells: "));
    ["response", "service"].forEach(function (v) {
      var b = el("button", { type: "button", "data-view": v, "aria-pressed": v === "response" ? "true" : "false" }, v + " time");
      b.addEventListener("click", function () { setView(v); });
      sw.appendChild(b);
    });
    tools.appendChild(sw);
    var q = new URL(window.location.href).searchParams.get("view");
    if (q === "service") setView("service");
  }

  // ---- A cell's CDF on a log latency axis, its peers laid over it.
  var COLOURS = ["#0072b2", "#d55e00", "#009e73", "#cc79a7", "#e69f00", "#56b4e9", "#000000", "#f0e442"];
  function initChart() {
    var host = document.getElementById("cdf");
    var data = document.getElementById("cdf-data");
    if (!host || !data || typeof uPlot === "undefined") return;
    var d = JSON.parse(data.textContent);
    var series = d.series.filter(function (s) { return s.points.length > 0; });
    if (!series.length) { host.textContent = "No CDF points in this result."; return; }
    // uPlot draws series over one x array: the union of every series' latencies,
    // each series a step function (its fraction at the largest point not above x).
    var xs = [];
    series.forEach(function (s) { s.points.forEach(function (p) { if (p[0] > 0) xs.push(p[0]); }); });
    xs.sort(function (a, b) { return a - b; });
    xs = xs.filter(function (x, i) { return i === 0 || x !== xs[i - 1]; });
    var cols = [xs];
    series.forEach(function (s) {
      var pts = s.points.filter(function (p) { return p[0] > 0; });
      var out = new Array(xs.length), j = -1;
      for (var i = 0; i < xs.length; i++) {
        while (j + 1 < pts.length && pts[j + 1][0] <= xs[i]) j++;
        out[i] = j < 0 ? null : pts[j][1];
        if (j === pts.length - 1 && xs[i] > pts[j][0]) out[i] = null;  // past its maximum: nothing to draw
      }
      cols.push(out);
    });
    var width = Math.min(host.clientWidth || 900, 960);
    var opts = {
      width: width,
      height: 420,
      title: d.view + " time CDF",
      scales: { x: { time: false, distr: 3 }, y: { range: [0, 1] } },
      axes: [
        { label: d.view + " time (us, log)", values: function (u, vals) { return vals.map(function (v) { return v == null ? "" : +v.toPrecision(3); }); } },
        { label: "fraction of orders" }
      ],
      series: [{ label: "us", value: function (u, v) { return v == null ? "-" : v.toPrecision(4); } }].concat(series.map(function (s, i) {
        return {
          label: s.label + (s.main ? "" : " (peer)"),
          stroke: COLOURS[i % COLOURS.length],
          width: s.main ? 2.5 : 1.5,
          dash: s.main ? undefined : [6, 4],
          spanGaps: true,
          paths: uPlot.paths && uPlot.paths.stepped ? uPlot.paths.stepped({ align: 1 }) : undefined,
          value: function (u, v) { return v == null ? "-" : v.toFixed(5); }
        };
      }))
    };
    host.textContent = "";
    new uPlot(opts, cols, host);
    host.dataset.series = String(series.length);
    host.dataset.ready = "1";
  }

  // ---- Two sittings compared, chosen on the page or by URL (?a=&b=&flavour=&peer=).
  var TRANSPORTS = ["kernel", "tls", "uring", "onload", "vma", "tcpdirect", "socketxtreme"];
  var MODELS = ["single", "mono", "pool", "shard"];
  function diffs(a, b) {
    var keys = Object.keys(a).concat(Object.keys(b).filter(function (k) { return !(k in a); })).sort();
    var out = [];
    keys.forEach(function (k) {
      var va = k in a ? a[k] : "-", vb = k in b ? b[k] : "-";
      if (va !== vb) out.push(k + " " + va + " -> " + vb);
    });
    return out;
  }
  function compare(A, B, flavour, peer) {
    if (A.epoch !== B.epoch)
      return { refusal: "refused: " + A.name + " is hardware epoch " + A.epoch + " (" + A.cpu + "), " + B.name + " is epoch " +
        B.epoch + " (" + B.cpu + "); figures of two hardware epochs are never compared" };
    if (A.method !== B.method)
      return { refusal: "refused: " + A.name + " was measured with method " + A.method + ", " + B.name + " with method " +
        B.method + "; figures of two method versions are never compared" };
    var tables = [], touched = {}, order = [], total = 0;
    [["closed", "Closed, p50 in us"], ["open", "Open, service p50 in us"]].forEach(function (lt) {
      var rows = [];
      MODELS.forEach(function (m) {
        TRANSPORTS.forEach(function (t) {
          var id = function (f) { return f + "/" + t + "/" + m + "/" + lt[0]; };
          var ra = A.cells[id(flavour)], rb = B.cells[id(flavour)], rp = B.cells[id(peer)];
          if (!ra && !rb) return;
          var row = { cell: t + "/" + m, before: ra ? ra.fig : "-", now: rb ? rb.fig : "-", peer: rp ? rp.fig : "-", differs: [] };
          if (ra && rb) row.differs = diffs(ra.settings, rb.settings);
          row.differs.forEach(function (d) {
            if (!touched[d]) { touched[d] = []; order.push(d); }
            touched[d].push(lt[0] + " " + row.cell);
          });
          rows.push(row);
          total++;
        });
      });
      if (rows.length) tables.push({ loop: lt[0], title: lt[1], rows: rows });
    });
    order.sort();
    var differences = order.map(function (d) { return d + ": " + (touched[d].length === total ? "every row" : touched[d].join(", ")); });
    var changes = [], onlyNow = 0, onlyBefore = 0;
    Object.keys(B.cells).sort().forEach(function (id) {
      if (!A.cells[id]) { onlyNow++; return; }
      if (A.cells[id].word !== B.cells[id].word) changes.push(id + ": " + A.cells[id].word + " to " + B.cells[id].word);
    });
    Object.keys(A.cells).forEach(function (id) { if (!B.cells[id]) onlyBefore++; });
    return { tables: tables, differences: differences, changes: changes, onlyNow: onlyNow, onlyBefore: onlyBefore };
  }
  function renderComparison(A, B, flavour, peer) {
    var c = compare(A, B, flavour, peer);
    if (c.refusal) return '<p class="refusal">' + esc(c.refusal) + "</p>";
    var h = '<p class="cmp-head">' + esc(flavour) + ": <strong>" + esc(A.name) + "</strong> (before) against <strong>" +
      esc(B.name) + "</strong> (now). Machine " + esc(B.machine) + ", " + esc(B.cpu_model) + " (epoch " + esc(B.epoch) +
      "), method " + esc(B.method) + "; the " + esc(peer) + " column is from the later sitting.</p>";
    if (c.differences.length) {
      h += '<div class="differences"><p>Settings that differ between the two sittings (before -&gt; now), and the rows they touch:</p><ul>';
      c.differences.forEach(function (d) { h += "<li>" + esc(d) + "</li>"; });
      h += "</ul></div>";
    }
    c.tables.forEach(function (t) {
      h += "<h2>" + esc(t.title) + '</h2><table class="compare" data-loop="' + t.loop + '"><thead><tr><th>Cell</th><th>Before</th><th>Now</th><th>' +
        esc(peer) + "</th><th>Settings that differ</th></tr></thead><tbody>";
      t.rows.forEach(function (r) {
        h += "<tr><td>" + esc(r.cell) + "</td><td>" + esc(r.before) + "</td><td>" + esc(r.now) + "</td><td>" + esc(r.peer) +
          '</td><td class="differs">' + esc(r.differs.join("; ")) + "</td></tr>";
      });
      h += "</tbody></table>";
    });
    h += '<h2>Verdicts that changed</h2><ul class="changes">';
    if (!c.changes.length) h += "<li>None.</li>";
    c.changes.forEach(function (v) { h += "<li>" + esc(v) + "</li>"; });
    h += "</ul>";
    if (c.onlyNow || c.onlyBefore) h += "<p>" + c.onlyNow + " cells only in the later sitting, " + c.onlyBefore + " only in the earlier one.</p>";
    return h;
  }
  function initPicker() {
    var form = document.getElementById("picker"), out = document.getElementById("comparison");
    if (!form || !out || !window.KITE_COMPARE) return;
    var byName = {};
    window.KITE_COMPARE.forEach(function (s) { byName[s.name] = s; });
    var fields = { a: "pick-a", b: "pick-b", flavour: "pick-flavour", peer: "pick-peer" };
    var q = new URL(window.location.href).searchParams;
    Object.keys(fields).forEach(function (k) {
      var v = q.get(k);
      if (v !== null) document.getElementById(fields[k]).value = v;
    });
    function run(push) {
      var v = {};
      Object.keys(fields).forEach(function (k) { v[k] = document.getElementById(fields[k]).value; });
      var A = byName[v.a], B = byName[v.b];
      if (!A || !B) {
        out.innerHTML = '<p class="refusal">No sitting named ' + esc(!A ? v.a : v.b) + " on this host.</p>";
        return;
      }
      out.innerHTML = renderComparison(A, B, v.flavour || "cpp", v.peer || "quickfix");
      out.dataset.a = v.a;
      out.dataset.b = v.b;
      if (push) {
        var u = new URL(window.location.href);
        Object.keys(v).forEach(function (k) { u.searchParams.set(k, v[k]); });
        try { history.replaceState(null, "", u.toString()); } catch (e) { /* file:// in some browsers */ }
      }
    }
    form.addEventListener("submit", function (e) { e.preventDefault(); run(true); });
    form.addEventListener("change", function () { run(true); });
    if (q.get("a") || q.get("b")) run(false);
  }

  // ---- A sweep's series: latency against offered rate or sessions, log axes,
  // one line per flavour, each flavour's knee ringed; the figure is chosen.
  var FIGURES = [["response", "p99"], ["response", "p50"], ["response", "p999"], ["response", "max"],
                 ["service", "p50"], ["service", "p99"]];
  function drawSweep(host, d, figure) {
    var xs = [];
    d.lines.forEach(function (l) { l.points.forEach(function (p) { if (p.x > 0) xs.push(p.x); }); });
    xs.sort(function (a, b) { return a - b; });
    xs = xs.filter(function (x, i) { return i === 0 || x !== xs[i - 1]; });
    if (!xs.length) { host.textContent = "No measured step in this series."; return; }
    var cols = [xs], series = [{ label: d.series === "rate" ? "orders/s" : "sessions" }];
    d.lines.forEach(function (l, i) {
      var colour = COLOURS[i % COLOURS.length];
      var byX = {};
      l.points.forEach(function (p) {
        var v = p[figure[0]] && p[figure[0]][figure[1]];
        if (typeof v === "number" && v > 0) byX[p.x] = v;
      });
      cols.push(xs.map(function (x) { return x in byX ? byX[x] : null; }));
      series.push({ label: l.flavour, stroke: colour, width: 2, spanGaps: true,
                    points: { show: true, size: 6 },
                    value: function (u, v) { return v == null ? "-" : v.toPrecision(4); } });
      cols.push(xs.map(function (x) { return x === l.knee && x in byX ? byX[x] : null; }));
      series.push({ label: l.flavour + " knee", stroke: colour, width: 0, paths: function () { return null; },
                    points: { show: true, size: 16, width: 2.5, fill: "transparent", stroke: colour },
                    value: function (u, v) { return v == null ? "-" : v.toPrecision(4); } });
    });
    var width = Math.min(host.clientWidth || 900, 960);
    var opts = {
      width: width,
      height: 420,
      title: figure[0] + " " + figure[1] + " against " + (d.series === "rate" ? "offered rate" : "sessions"),
      scales: { x: { time: false, distr: 3 }, y: { distr: 3 } },
      axes: [
        { label: d.series === "rate" ? "offered rate, orders/s (log)" : "sessions (log)",
          values: function (u, vals) { return vals.map(function (v) { return v == null ? "" : +v.toPrecision(3); }); } },
        { label: figure[0] + " time " + figure[1] + " (us, log)", size: 80,
          values: function (u, vals) { return vals.map(function (v) { return v == null ? "" : +v.toPrecision(3); }); } }
      ],
      series: series
    };
    host.textContent = "";
    new uPlot(opts, cols, host);
    host.dataset.lines = String(d.lines.length);
    host.dataset.figure = figure.join(" ");
    host.dataset.ready = "1";
  }
  function initSweeps() {
    if (typeof uPlot === "undefined") return;
    document.querySelectorAll(".sweep-chart").forEach(function (host) {
      var data = document.getElementById(host.id + "-data");
      if (!data) return;
      var d = JSON.parse(data.textContent);
      var pick = el("select", { class: "sweep-figure", "aria-label": "figure drawn" });
      FIGURES.forEach(function (f, i) { pick.appendChild(el("option", { value: String(i) }, f[0] + " " + f[1])); });
      var label = el("label", {}, "Figure: ");
      label.appendChild(pick);
      host.parentNode.insertBefore(label, host);
      pick.addEventListener("change", function () { drawSweep(host, d, FIGURES[+pick.value]); });
      drawSweep(host, d, FIGURES[0]);
    });
  }

  initSwitch();
  initChart();
  initPicker();
  initSweeps();
})();
