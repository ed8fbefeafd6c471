// Sluice dashboard: polls /dashboard/api/state and draws it as plain SVG.
// Text from the store only ever goes through textContent / setAttribute: never HTML.
"use strict";
(function () {
  const SVG = "http://www.w3.org/2000/svg";
  const HOUR = 3600;
  const SERIES = [["enq", "enqueued", "#2f6fb3"], ["deq", "dequeued", "#2e9d57"],
                  ["capture", "captured", "#8e5bb5"], ["prop", "propagated", "#d99a00"],
                  ["apply", "applied", "#d2333d"]];
  const meta = (name) => document.querySelector(`meta[name="${name}"]`).getAttribute("content");
  const csrf = meta("csrf-token");
  const pollMs = Math.max(200, parseInt(meta("poll-ms"), 10) || 2000);
  let points = [];        // chart points, the last hour
  let since = 0;
  let lastReading = null;

  function el(tag, attrs, text) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }
  function svg(tag, attrs, text) {
    const e = document.createElementNS(SVG, tag);
    for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, String(v));
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }
  function fmt(n, digits) {
    if (n === null || n === undefined || Number.isNaN(n)) return "–";
    if (Math.abs(n) >= 1000) return Math.round(n).toLocaleString("en");
    return Number(n).toFixed(digits === undefined ? 1 : digits).replace(/\.0+$/, "");
  }
  function age(seconds) {
    if (seconds === null || seconds === undefined) return "–";
    if (seconds < 60) return fmt(seconds) + " s";
    if (seconds < 3600) return fmt(seconds / 60) + " min";
    return fmt(seconds / 3600) + " h";
  }

  // -- topology: layers by longest path from the sources, one column per layer --------
  function layout(nodes, edges) {
    const layer = new Map(nodes.map((n) => [n.id, 0]));
    for (let i = 0; i < nodes.length; i++) {        // at most |nodes| rounds: cycles stop
      let moved = false;
      for (const e of edges) {
        if (layer.has(e.from) && layer.has(e.to) && layer.get(e.to) < layer.get(e.from) + 1) {
          layer.set(e.to, layer.get(e.from) + 1); moved = true;
        }
      }
      if (!moved) break;
    }
    const columns = [];
    for (const n of nodes) {
      const l = Math.min(layer.get(n.id), nodes.length);
      (columns[l] = columns[l] || []).push(n);
    }
    const pos = new Map();
    columns.forEach((col, x) => {
      col.sort((a, b) => (a.site + a.label).localeCompare(b.site + b.label));
      col.forEach((n, y) => pos.set(n.id, { x: 20 + x * 250, y: 20 + y * 74 }));
    });
    return pos;
  }

  function drawTopology(reading) {
    const box = document.getElementById("topology");
    const nodes = reading.nodes || [], edges = reading.edges || [];
    if (!nodes.length) return;
    const rates = reading.rates || {}, gauges = reading.gauges || {};
    const pos = layout(nodes, edges);
    const W = 170, H = 46;
    let width = 0, height = 0;
    for (const p of pos.values()) { width = Math.max(width, p.x + W + 60); height = Math.max(height, p.y + H + 20); }
    const root = svg("svg", { width, height, viewBox: `0 0 ${width} ${height}`, role: "img",
                              "aria-label": "Streams topology" });
    for (const e of edges) {
      const a = pos.get(e.from), b = pos.get(e.to);
      if (!a || !b) continue;
      const x1 = a.x + W, y1 = a.y + H / 2, x2 = b.x, y2 = b.y + H / 2, mx = (x1 + x2) / 2;
      const g = svg("g", { class: "edge", "data-from": e.from, "data-to": e.to, "data-health": e.health });
      g.appendChild(svg("path", { d: `M${x1},${y1} C${mx},${y1} ${mx},${y2} ${x2},${y2}`,
                                  class: "health-" + e.health, "marker-end": "url(#arrow)" }));
      const parts = [];
      if (e.counter) parts.push(fmt(rates[e.counter] || 0) + "/s");
      if (e.lag && gauges[e.lag] !== undefined && gauges[e.lag] !== null) parts.push("lag " + age(gauges[e.lag]));
      const label = svg("text", { x: mx, y: (y1 + y2) / 2 - 6, "text-anchor": "middle", class: "edge-label" },
                        parts.join(" · "));
      if (e.note) label.appendChild(svg("title", {}, e.note));
      g.appendChild(label);
      root.appendChild(g);
    }
    for (const n of nodes) {
      const p = pos.get(n.id);
      const g = svg("g", { class: "node", "data-id": n.id, "data-kind": n.kind, transform: `translate(${p.x},${p.y})` });
      g.appendChild(svg("rect", { width: W, height: H, class: "health-" + n.health }));
      g.appendChild(svg("text", { x: 8, y: 14, class: "kind" }, `${n.kind} · ${n.site}`));
      const name = n.label.length > 24 ? n.label.slice(0, 23) + "…" : n.label;
      g.appendChild(svg("text", { x: 8, y: 31, class: "label" }, name));
      if (n.state) g.appendChild(svg("text", { x: 8, y: 42, class: "kind" }, n.state));
      g.appendChild(svg("title", {}, `${n.kind} ${n.label} @ ${n.site}${n.state ? " — " + n.state : ""}${n.detail ? "\n" + n.detail : ""}`));
      root.appendChild(g);
    }
    const defs = svg("defs");
    const marker = svg("marker", { id: "arrow", viewBox: "0 0 10 10", refX: 9, refY: 5, markerWidth: 7,
                                   markerHeight: 7, orient: "auto-start-reverse" });
    marker.appendChild(svg("path", { d: "M0,0 L10,5 L0,10 z", fill: "#66727f" }));
    defs.appendChild(marker);
    root.insertBefore(defs, root.firstChild);
    box.replaceChildren(root);
  }

  // -- charts: SVG polylines over the last hour ----------------------------------------
  function drawChart(id, series, now) {
    const box = document.getElementById(id);
    const W = 600, H = 180, L = 44, B = 18, T = 8;
    const root = svg("svg", { viewBox: `0 0 ${W} ${H}`, preserveAspectRatio: "none" });
    // the last hour, or since the server started when that was less than an hour ago
    const start = Math.min(now - 60, Math.max(now - HOUR, points.length ? points[0].t : now - HOUR));
    const span = now - start;
    let max = 0;
    for (const [key] of series) for (const p of points) max = Math.max(max, p[key] || 0);
    max = max > 0 ? max * 1.1 : 1;
    const x = (t) => L + (W - L - 4) * (t - start) / span;
    const y = (v) => H - B - (H - B - T) * v / max;
    root.appendChild(svg("line", { x1: L, y1: H - B, x2: W, y2: H - B, class: "axis" }));
    root.appendChild(svg("line", { x1: L, y1: T, x2: L, y2: H - B, class: "axis" }));
    root.appendChild(svg("text", { x: L - 4, y: T + 8, "text-anchor": "end" }, fmt(max)));
    root.appendChild(svg("text", { x: L - 4, y: H - B, "text-anchor": "end" }, "0"));
    root.appendChild(svg("text", { x: L, y: H - 4 }, "−" + age(span)));
    root.appendChild(svg("text", { x: W - 4, y: H - 4, "text-anchor": "end" }, "now"));
    for (const [key, , colour] of series) {
      const coords = points.map((p) => `${x(p.t).toFixed(1)},${y(p[key] || 0).toFixed(1)}`).join(" ");
      if (coords) root.appendChild(svg("polyline", { points: coords, fill: "none", stroke: colour,
                                                     "stroke-width": 1.6, "data-series": key }));
    }
    const legend = el("div", { class: "legend" });
    for (const [key, label, colour] of series) {
      const last = points.length ? points[points.length - 1][key] : 0;
      const item = el("span", { "data-series": key });
      const swatch = el("i"); swatch.style.background = colour;
      item.appendChild(swatch);
      item.appendChild(document.createTextNode(`${label} ${fmt(last)}`));
      legend.appendChild(item);
    }
    box.replaceChildren(root, legend);
    box.setAttribute("data-points", String(points.length));
    const total = points.reduce((s, p) => s + series.reduce((t, [k]) => t + (p[k] || 0), 0), 0);
    box.setAttribute("data-total", total.toFixed(3));
  }

  // -- queue cards ------------------------------------------------------------------
  function sparkline(values) {
    const W = 200, H = 34;
    const root = svg("svg", { viewBox: `0 0 ${W} ${H}`, preserveAspectRatio: "none" });
    if (values && values.length > 1) {
      const max = Math.max(1, ...values);
      const step = W / (values.length - 1);
      root.appendChild(svg("polyline", {
        points: values.map((v, i) => `${(i * step).toFixed(1)},${(H - 2 - (H - 4) * v / max).toFixed(1)}`).join(" ") }));
    }
    return root;
  }

  function drawQueues(reading, sparklines) {
    const box = document.getElementById("queues");
    const rates = reading.rates || {};
    const cards = (reading.queues || []).map((q) => {
      const card = el("div", { class: "card health-" + (q.health || "idle"), "data-id": q.id });
      card.appendChild(el("div", { class: "name" }, q.name));
      card.appendChild(el("div", { class: "site" }, `${q.site}${q.type ? " · " + q.type : ""}`));
      const dl = el("dl");
      const facts = [["ready", fmt(q.ready, 0)], ["waiting", fmt(q.waiting, 0)], ["expired", fmt(q.expired, 0)],
                     ["oldest", age(q.oldest_age)], ["in", fmt(rates[q.enq_key] || 0) + "/s"],
                     ["out", fmt(rates[q.deq_key] || 0) + "/s"]];
      for (const [k, v] of facts) { dl.appendChild(el("dt", {}, k)); dl.appendChild(el("dd", { "data-fact": k }, v)); }
      card.appendChild(dl);
      card.appendChild(sparkline(sparklines[q.depth_key]));
      return card;
    });
    if (cards.length) box.replaceChildren(...cards);
    else box.replaceChildren(el("p", { class: "empty" }, "No queues."));
  }

  // -- the error queue --------------------------------------------------------------
  function status(text, good) {
    const s = document.getElementById("action-status");
    s.textContent = text;
    s.className = "status " + (good ? "good" : "bad");
  }

  async function act(entry, action, buttons) {
    buttons.forEach((b) => { b.disabled = true; });
    try {
      const r = await fetch(`/dashboard/api/errors/${encodeURIComponent(entry.id)}/${action}`, {
        method: "POST", credentials: "same-origin", cache: "no-store",
        headers: { "X-CSRF-Token": csrf, "Content-Type": "application/json" }, body: "{}" });
      const body = await r.json().catch(() => ({}));
      if (r.ok) {
        status(`${action === "execute" ? "Applied" : "Deleted"} error transaction ${entry.id}.`, true);
        poll();
      } else {
        status(body.error || `HTTP ${r.status}`, false);
        buttons.forEach((b) => { b.disabled = false; });
      }
    } catch (err) {
      status(String(err), false);
      buttons.forEach((b) => { b.disabled = false; });
    }
  }

  let shownErrors = null;
  function drawErrors(reading) {
    const errors = reading.errors || { total: 0, entries: [] };
    document.getElementById("error-count").textContent =
      errors.total > errors.entries.length ? `${errors.total} (first ${errors.entries.length} shown)` : String(errors.total);
    const signature = JSON.stringify(errors.entries);
    if (signature === shownErrors) return;      // unchanged: keep the rows (and a click under way)
    shownErrors = signature;
    const rows = errors.entries.map((e) => {
      const tr = el("tr", { "data-id": e.id });
      tr.appendChild(el("td", {}, e.id));
      tr.appendChild(el("td", {}, `${e.apply} (${e.queue})`));
      tr.appendChild(el("td", {}, `${e.source_database || "–"} ${e.source_transaction_id || ""}`));
      const code = `ORA-${String(e.error_number).padStart(5, "0")}`;
      const text = e.error_message || "";
      tr.appendChild(el("td", { class: "err" }, text.startsWith(code) ? text : `${code}: ${text}`));
      const msg = el("td");
      msg.appendChild(el("div", {}, `message ${e.message_number} of ${e.message_count}`));
      msg.appendChild(el("code", { class: "excerpt" }, e.excerpt));
      tr.appendChild(msg);
      tr.appendChild(el("td", {}, e.created || ""));
      const td = el("td");
      const retry = el("button", { class: "retry", type: "button", title: "DBMS_APPLY_ADM.EXECUTE_ERROR" }, "Retry");
      const del = el("button", { class: "delete", type: "button", title: "DBMS_APPLY_ADM.DELETE_ERROR" }, "Delete");
      retry.addEventListener("click", () => act(e, "execute", [retry, del]));
      del.addEventListener("click", () => {
        if (window.confirm(`Delete error transaction ${e.id}? Its messages will not be applied.`)) act(e, "delete", [retry, del]);
      });
      td.append(retry, del);
      tr.appendChild(td);
      return tr;
    });
    document.querySelector("#errors tbody").replaceChildren(...rows);
  }

  // -- polling ----------------------------------------------------------------------
  let timer = null, busy = false;
  async function poll() {
    if (busy) return;
    busy = true;
    try {
      const r = await fetch(`/dashboard/api/state?since=${since}`, { credentials: "same-origin", cache: "no-store" });
      if (!r.ok) throw new Error(`HTTP ${r.status}`);
      const state = await r.json();
      for (const p of state.points) { points.push(p); since = Math.max(since, p.t); }
      points = points.filter((p) => p.t > state.now - HOUR);
      const reading = state.reading;
      const fresh = document.getElementById("freshness");
      if (reading) {
        lastReading = reading;
        document.getElementById("site").textContent = reading.site || "";
        drawTopology(reading);
        drawQueues(reading, state.sparklines || {});
        drawErrors(reading);
        const stale = state.now - reading.time > 3 * state.interval + 2;
        fresh.textContent = (state.sampler_error ? "reading failed: " + state.sampler_error + " · " : "") +
          "updated " + new Date(reading.time * 1000).toLocaleTimeString();
        fresh.classList.toggle("stale", stale || !!state.sampler_error);
      } else {
        fresh.textContent = "waiting for the first reading…";
      }
      drawChart("chart-throughput", SERIES, state.now);
      drawChart("chart-lag", [["lag", "lag (s)", "#d2333d"]], state.now);
    } catch (err) {
      const fresh = document.getElementById("freshness");
      fresh.textContent = "connection lost (" + err.message + "), retrying…";
      fresh.classList.add("stale");
    } finally {
      busy = false;
    }
  }
  poll();
  timer = setInterval(() => { if (!document.hidden) poll(); }, pollMs);
  window.sluiceDashboard = { poll, points: () => points, reading: () => lastReading, timer };
})();
