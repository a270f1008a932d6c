// kagent report: draws the page from the JSON block #kagent-data (written once by
// `kagent report`). Long lists are drawn in chunks as they scroll into view and a turn's
// details only when it is opened, so a page for a large collection opens fast. Text from
// the run (code, model output, messages) only ever goes into textContent, never into HTML.
(function () {
  'use strict';

  const DATA = JSON.parse(document.getElementById('kagent-data').textContent);
  const app = document.getElementById('app');
  const ROW_CHUNK = 100;  // table rows drawn at a time

  // ---- small helpers -------------------------------------------------------------------

  // h('div', {class: 'x', onclick: f}, child, 'text', ...): an element; null children are skipped.
  function h(tag, props, ...children) {
    const e = document.createElement(tag);
    if (props) {
      for (const [k, v] of Object.entries(props)) {
        if (v === null || v === undefined || v === false) continue;
        if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
        else if (k === 'text') e.textContent = v;
        else if (k === 'dataset') Object.assign(e.dataset, v);
        else e.setAttribute(k, v === true ? '' : v);
      }
    }
    append(e, children);
    return e;
  }
  function append(e, ...children) {
    for (const c of children.flat(Infinity)) {
      if (c === null || c === undefined || c === false) continue;
      e.appendChild(c instanceof Node ? c : document.createTextNode(String(c)));
    }
    return e;
  }
  const SVG_NS = 'http://www.w3.org/2000/svg';
  function s(tag, attrs, ...children) {
    const e = document.createElementNS(SVG_NS, tag);
    for (const [k, v] of Object.entries(attrs || {})) if (v !== null && v !== undefined) e.setAttribute(k, v);
    for (const c of children) {
      if (c === null || c === undefined) continue;
      e.appendChild(c instanceof Node ? c : document.createTextNode(String(c)));
    }
    return e;
  }
  const isNum = (x) => typeof x === 'number' && isFinite(x);
  const fmtX = (x) => (isNum(x) ? x.toFixed(2) + 'x' : '-');
  const fmtPct = (f, digits) => (isNum(f) ? (100 * f).toFixed(digits === undefined ? 1 : digits) + '%' : '-');
  const fmtInt = (n) => (isNum(n) ? Math.round(n).toLocaleString('en-US') : '-');
  const fmtSec = (x) => (isNum(x) ? (x >= 100 ? x.toFixed(0) : x.toFixed(1)) + ' s' : '-');
  function fmtMs(ms) {
    if (!isNum(ms)) return '-';
    if (ms >= 100) return ms.toFixed(0) + ' ms';
    if (ms >= 1) return ms.toFixed(2) + ' ms';
    return (ms * 1000).toFixed(1) + ' us';
  }
  function fmtBytes(b) {
    if (!isNum(b)) return '-';
    if (b >= 1e9) return (b / 1e9).toFixed(2) + ' GB';
    if (b >= 1e6) return (b / 1e6).toFixed(1) + ' MB';
    if (b >= 1e3) return (b / 1e3).toFixed(1) + ' KB';
    return b.toFixed(0) + ' B';
  }
  const dims = (d) => (Array.isArray(d) ? d.filter((x, i) => x !== 1 || i === 0).join('x') : '-');

  // Runs draw() once `node` comes near the viewport (lazy drawing of charts and table chunks).
  function whenVisible(node, draw) {
    if (!('IntersectionObserver' in window)) { draw(); return; }
    const io = new IntersectionObserver((entries) => {
      if (entries.some((e) => e.isIntersecting)) { io.disconnect(); draw(); }
    }, {rootMargin: '400px'});
    io.observe(node);
  }

  // ---- verdicts ------------------------------------------------------------------------

  const VERDICT_LABELS = {
    correct: 'ok', wrong: 'wrong', compile_error: 'compile', runtime_error: 'runtime', timeout: 'timeout',
    crash: 'crash', invalid: 'invalid', rejected: 'rejected', no_gpu: 'no gpu', internal_error: 'internal',
    problem_error: 'problem', format: 'format', llm: 'model error', eval: 'eval failed', cancelled: 'cancelled',
    unknown: '?', error: 'error', pending: 'running',
  };
  const VERDICT_MEANING = {
    correct: 'correct', wrong: 'wrong output', compile_error: 'compile error', runtime_error: 'runtime error',
    timeout: 'timeout', crash: 'crash', invalid: 'invalid candidate', rejected: 'rejected by a guard',
    no_gpu: 'compiled, not run (no GPU)', internal_error: 'kagent error', problem_error: 'problem error',
    format: 'no usable code in the answer', llm: 'model call failed', eval: 'evaluation failed',
    cancelled: 'cancelled', pending: 'in progress',
  };
  const verdictLabel = (v) => VERDICT_LABELS[v] || v;
  function cellText(t) {
    if (t.verdict === 'correct' && isNum(t.speedup_eager)) return 'ok ' + fmtX(t.speedup_eager);
    return verdictLabel(t.verdict);
  }
  const badge = (v, text) => h('span', {class: 'badge v-' + v, text: text || verdictLabel(v)});
  // The CSS colour of a verdict, for SVG marks (one palette: the stylesheet's).
  const colourCache = {};
  function verdictColour(v) {
    if (!(v in colourCache)) {
      const probe = h('span', {class: 'v-' + v, style: 'display:none'});
      document.body.appendChild(probe);
      colourCache[v] = getComputedStyle(probe).backgroundColor;
      probe.remove();
    }
    return colourCache[v];
  }
  function legend(verdicts) {
    return h('div', {class: 'legend'}, [...verdicts].map((v) =>
      h('span', null, h('i', {class: 'v-' + v}), VERDICT_MEANING[v] || verdictLabel(v))));
  }

  // ---- charts (inline SVG) -------------------------------------------------------------

  // A line chart. opts: {title, width, height, xMin, xMax, yMin, yMax, xTicks, yTicks, xLabel,
  // yFmt, ref (y of a dashed reference line), series: [{cls, label, points: [[x, y|null]...], dots}],
  // marks: [{x, y, colour, title}]}. A null y breaks the line.
  function lineChart(o) {
    const W = o.width || 360, H = o.height || 190, L = 44, R = 10, T = 8, B = 28;
    const xs = (x) => L + ((x - o.xMin) / ((o.xMax - o.xMin) || 1)) * (W - L - R);
    const ys = (y) => H - B - ((y - o.yMin) / ((o.yMax - o.yMin) || 1)) * (H - T - B);
    const svg = s('svg', {width: W, height: H, viewBox: `0 0 ${W} ${H}`, role: 'img'});
    for (const y of o.yTicks) {
      svg.appendChild(s('line', {class: 'gridline', x1: L, x2: W - R, y1: ys(y), y2: ys(y)}));
      svg.appendChild(s('text', {x: L - 4, y: ys(y) + 3, 'text-anchor': 'end'}, (o.yFmt || String)(y)));
    }
    for (const x of o.xTicks) svg.appendChild(s('text', {x: xs(x), y: H - B + 12, 'text-anchor': 'middle'}, (o.xFmt || String)(x)));
    svg.appendChild(s('line', {class: 'axis', x1: L, x2: W - R, y1: H - B, y2: H - B}));
    svg.appendChild(s('line', {class: 'axis', x1: L, x2: L, y1: T, y2: H - B}));
    if (o.xLabel) svg.appendChild(s('text', {x: (L + W - R) / 2, y: H - 3, 'text-anchor': 'middle'}, o.xLabel));
    if (isNum(o.ref) && o.ref >= o.yMin && o.ref <= o.yMax)
      svg.appendChild(s('line', {class: 'ref', x1: L, x2: W - R, y1: ys(o.ref), y2: ys(o.ref)}));
    for (const se of o.series) {
      let d = '', pen = false;
      for (const [x, y] of se.points) {
        if (!isNum(y)) { pen = false; continue; }
        d += (pen ? 'L' : 'M') + xs(x).toFixed(1) + ' ' + ys(Math.min(y, o.yMax)).toFixed(1) + ' ';
        pen = true;
      }
      const path = s('path', {class: 'series ' + se.cls, d: d.trim(), 'data-points': se.points.filter((p) => isNum(p[1])).length});
      path.appendChild(s('title', null, se.label));
      svg.appendChild(path);
      if (se.dots)
        for (const [x, y] of se.points)
          if (isNum(y)) svg.appendChild(s('circle', {class: 'dot-' + se.dots, cx: xs(x), cy: ys(Math.min(y, o.yMax)), r: 3}));
    }
    for (const m of o.marks || []) {
      const r = s('rect', {class: 'mark', x: xs(m.x) - 4, y: ys(m.y) - 4, width: 8, height: 8, rx: 2, fill: m.colour});
      r.appendChild(s('title', null, m.title));
      svg.appendChild(r);
    }
    // The legend: a short line in each series' own style, then the note.
    const keys = o.keyed ? o.series.map((se) => [s('svg', {width: 22, height: 8}, s('path', {class: 'series ' + se.cls, d: 'M1 4 L21 4'})), se.label]) : [];
    return h('div', {class: 'chart', dataset: {chart: o.kind || 'line'}},
      h('div', {class: 'title', text: o.title}), svg,
      keys.length || o.legend ? h('div', {class: 'chart-legend'}, keys, o.legend ? h('div', {text: o.legend}) : null) : null);
  }

  function niceMax(v) {
    for (const m of [1.2, 1.5, 2, 3, 4, 5, 8, 10, 15, 20, 30, 50, 100]) if (v <= m) return m;
    return Math.ceil(v / 50) * 50;
  }
  // Ticks from 0 to max at a round step, at most about six of them.
  function ticksTo(max) {
    const step = [0.1, 0.25, 0.5, 1, 2, 5, 10, 20, 25, 50, 100, 200, 500, 1000].find((st) => max / st <= 6) || max / 5;
    const ticks = [];
    for (let v = 0; v <= max + 1e-9; v += step) ticks.push(+v.toFixed(2));
    return ticks;
  }

  // Speedup by turn for one sample: a line over eager and one over torch.compile; turns
  // without a timing sit on the axis as marks in their verdict's colour.
  function speedupChart(sample, turns, title) {
    const T = Math.max(turns, sample.turns.length, 1);
    const pts = (key) => sample.turns.map((t) => [t.index + 1, t.verdict === 'correct' && isNum(t[key]) ? t[key] : null]);
    const e = pts('speedup_eager'), c = pts('speedup_compiled');
    const ymax = niceMax(Math.max(1.2, ...e.concat(c).map((p) => p[1]).filter(isNum)) * 1.1);
    const marks = sample.turns.filter((t) => !(t.verdict === 'correct' && isNum(t.speedup_eager))).map((t) => ({
      x: t.index + 1, y: 0, colour: verdictColour(t.verdict), title: 'turn ' + (t.index + 1) + ': ' + verdictLabel(t.verdict)}));
    const timed = e.concat(c).some((p) => isNum(p[1]));
    return lineChart({
      kind: 'speedup', title, xMin: 0.5, xMax: T + 0.5, yMin: 0, yMax: ymax,
      xTicks: Array.from({length: T}, (_, i) => i + 1), yTicks: ticksTo(ymax), yFmt: (y) => y + 'x', xLabel: 'turn', ref: 1,
      series: [{cls: 's-eager', label: 'speedup over eager', points: e, dots: 'eager'},
               {cls: 's-compiled', label: 'speedup over torch.compile', points: c, dots: 'compiled'}],
      marks, keyed: timed,
      legend: timed ? 'squares: turns without a timing, coloured by verdict' : 'no timed correct turn yet: squares are the turns, coloured by verdict',
    });
  }

  // ---- the samples x turns grid --------------------------------------------------------

  function drawGrid(run, onSelect) {
    const turns = Math.max(run.config && run.config.turns || 0, ...run.samples.map((s) => s.turns.length), 1);
    const best = run.best;
    const head = h('tr', null, h('th', {class: 'row', text: 'sample'}),
      Array.from({length: turns}, (_, i) => h('th', {text: 'turn ' + (i + 1)})), h('th', {text: 'best'}));
    const body = h('tbody');
    const seen = new Set();
    const rows = run.samples.slice();
    for (let i = rows.length; i < (run.samples_expected || 0); ++i) rows.push({sample: i, status: 'not started', turns: [], missing: true});
    for (const sm of rows) {
      const tr = h('tr', {dataset: {sample: sm.sample}}, h('th', {class: 'row'}, 'sample ' + sm.sample,
        sm.status === 'running' ? h('span', {class: 'muted', text: ' (running)'}) : null));
      for (let k = 0; k < turns; ++k) {
        const t = sm.turns[k];
        if (t) {
          seen.add(t.verdict);
          const isBest = best && best.sample === sm.sample && best.turn === t.index;
          const td = h('td', {class: 'cell v-' + t.verdict + (isBest ? ' best' : ''), title: (isBest ? 'best kernel · ' : '') + (t.message || ''),
            dataset: {verdict: t.verdict, sample: sm.sample, turn: t.index}, onclick: () => onSelect(sm, t)}, cellText(t) + (isBest ? ' \u2605' : ''));
          tr.appendChild(td);
        } else if (k === sm.turns.length && sm.status === 'running') {
          seen.add('pending');
          tr.appendChild(h('td', {class: 'cell v-pending', dataset: {verdict: 'pending', sample: sm.sample, turn: k}, text: 'running'}));
        } else {
          tr.appendChild(h('td'));
        }
      }
      const bt = sm.best_turn !== undefined && sm.best_turn !== null ? sm.turns[sm.best_turn] : null;
      tr.appendChild(h('td', {class: 'after'}, bt ? fmtX(bt.speedup_eager) + ' (turn ' + (bt.index + 1) + ')' :
        (sm.missing ? 'not started' : sm.status === 'failed' ? 'failed: ' + (sm.error || '') : '-')));
      body.appendChild(tr);
    }
    return h('div', null, h('div', {class: 'scroll'}, h('table', {class: 'grid', id: 'grid'}, h('thead', null, head), body)), legend(seen));
  }

  // ---- one turn ------------------------------------------------------------------------

  // The code as a line diff against the previous turn's (jsdiff), unchanged runs folded.
  function diffView(before, after) {
    const box = h('div', {class: 'diff'});
    const parts = window.Diff.diffLines(before, after);
    const CONTEXT = 3;
    parts.forEach((p, i) => {
      const lines = p.value.replace(/\n$/, '').split('\n');
      if (p.added || p.removed) {
        for (const line of lines) box.appendChild(h('div', {class: p.added ? 'd-add' : 'd-del', text: line}));
        return;
      }
      const keepHead = i === 0 ? 0 : CONTEXT, keepTail = i === parts.length - 1 ? 0 : CONTEXT;
      if (lines.length <= keepHead + keepTail + 1) {
        for (const line of lines) box.appendChild(h('div', {class: 'd-ctx', text: line}));
        return;
      }
      for (const line of lines.slice(0, keepHead)) box.appendChild(h('div', {class: 'd-ctx', text: line}));
      box.appendChild(h('div', {class: 'd-skip', text: '\u2026 ' + (lines.length - keepHead - keepTail) + ' unchanged lines'}));
      for (const line of lines.slice(lines.length - keepTail)) box.appendChild(h('div', {class: 'd-ctx', text: line}));
    });
    const added = box.querySelectorAll('.d-add').length, removed = box.querySelectorAll('.d-del').length;
    box.dataset.added = added;
    box.dataset.removed = removed;
    return {box, added, removed};
  }

  function codeView(turn, prev) {
    const wrap = h('div');
    if (!turn.code) return h('p', {class: 'muted', text: 'no code in this turn'});
    const prevCode = prev && prev.code;
    const full = () => h('pre', {class: 'code', text: turn.code});
    if (!prevCode) {
      append(wrap, h('div', {class: 'muted', text: 'first code of this sample'}), full());
      return wrap;
    }
    const d = diffView(prevCode, turn.code);
    const holder = h('div', null, d.box);
    const bDiff = h('button', {class: 'on', text: `diff against turn ${prev.index + 1} (+${d.added} -${d.removed})`});
    const bFull = h('button', {text: 'whole code'});
    bDiff.onclick = () => { holder.replaceChildren(d.box); bDiff.className = 'on'; bFull.className = ''; };
    bFull.onclick = () => { holder.replaceChildren(full()); bFull.className = 'on'; bDiff.className = ''; };
    return append(wrap, h('div', {class: 'tabs'}, bDiff, ' ', bFull), holder);
  }

  function kv(pairs) {
    const g = h('div', {class: 'kv'});
    for (const [k, v] of pairs) if (v !== null && v !== undefined && v !== '') append(g, h('div', {class: 'k', text: k}), h('div', null, v));
    return g;
  }

  function timingTable(timing) {
    const rows = [['candidate', timing.candidate], ['eager', timing.eager], ['torch.compile', timing.compiled]].filter((r) => r[1]);
    if (!rows.length) return null;
    return h('table', {class: 'data'},
      h('tr', null, ['', 'median', 'noise (stdev/mean)', 'min', 'max', 'iterations', 'stopped by'].map((c) => h('th', {class: c ? 'num' : '', text: c}))),
      rows.map(([name, st]) => h('tr', null, h('td', {text: name}), h('td', {class: 'num', text: fmtMs(st.median_ms)}),
        h('td', {class: 'num', text: fmtPct(st.rel_stdev)}), h('td', {class: 'num', text: fmtMs(st.min_ms)}),
        h('td', {class: 'num', text: fmtMs(st.max_ms)}), h('td', {class: 'num', text: fmtInt(st.iterations)}),
        h('td', {text: st.stop_reason || ''}))));
  }

  function resourcesTable(res) {
    if (!res || !res.length) return null;
    return h('table', {class: 'data'},
      h('tr', null, ['kernel', 'registers', 'spill stores', 'spill loads', 'static smem', 'stack'].map((c, i) => h('th', {class: i ? 'num' : '', text: c}))),
      res.map((r) => h('tr', null, h('td', {text: r.kernel}), h('td', {class: 'num', text: r.registers}),
        h('td', {class: 'num', text: fmtBytes(r.spill_store_bytes)}), h('td', {class: 'num', text: fmtBytes(r.spill_load_bytes)}),
        h('td', {class: 'num', text: fmtBytes(r.shared_static_bytes)}), h('td', {class: 'num', text: fmtBytes(r.stack_frame_bytes)}))));
  }

  function evaluationView(t) {
    const e = t.eval;
    if (!e) return h('p', null, t.error ? t.error.kind + ': ' + t.error.message : 'no evaluation recorded');
    const c = e.compile, cor = e.correctness, tm = e.timing;
    const box = h('div');
    append(box, kv([
      ['verdict', h('span', null, badge(t.verdict), ' ', e.status + (e.reason ? ' (' + e.reason + ')' : ''))],
      ['message', e.message],
      ['compile', c ? (c.ok ? 'ok' : 'failed') + ' in ' + fmtSec(c.seconds) + (c.cache_hit ? ' (cache hit)' : '') : null],
      ['correctness', cor && cor.trials ? `${cor.trials_passed}/${cor.trials} trials passed, max abs error ${cor.max_abs_error}, max rel error ${cor.max_rel_error}` : null],
      ['speedup', tm && (isNum(tm.speedup_eager) || isNum(tm.speedup_compiled)) ? `${fmtX(tm.speedup_eager)} over eager, ${fmtX(tm.speedup_compiled)} over torch.compile` : null],
      ['evaluation time', fmtSec(e.eval_seconds) + ' in the worker' + (e.guards_seconds ? ', guards ' + fmtSec(e.guards_seconds) : '') + ', ' + fmtSec(t.eval_seconds) + ' end to end'],
    ]));
    if (c && c.errors) append(box, h('h3', {text: 'compiler errors'}), h('pre', {class: 'wrap', text: c.errors}));
    if (c && c.resources && c.resources.length) append(box, h('h3', {text: 'resources (ptxas)'}), h('div', {class: 'scroll'}, resourcesTable(c.resources)));
    if (cor && cor.first_failure) {
      const f = cor.first_failure;
      append(box, h('h3', {text: 'first failure'}), kv([
        ['where', `trial ${cor.first_failure_trial}${cor.first_failure_run ? ' (' + cor.first_failure_run + ')' : ''}, output ${f.output}`],
        ['what', f.message],
        ['elements outside tolerance', isNum(f.mismatched) ? `${fmtInt(f.mismatched)} of ${fmtInt(f.numel)} (atol ${f.atol}, rtol ${f.rtol})` : null],
        ['worst at', f.worst_index && f.worst_index.length ? '[' + f.worst_index.join(', ') + ']' : null],
        ['samples', f.samples && f.samples.length ? f.samples.slice(0, 5).map((m) => `[${m.index.join(', ')}] got ${m.got}, expected ${m.expected}`).join('; ') : null],
      ]));
    }
    if (tm) { const tt = timingTable(tm); if (tt) append(box, h('h3', {text: 'timing'}), h('div', {class: 'scroll'}, tt)); }
    if (e.guards && e.guards.length)
      append(box, h('h3', {text: 'reward-hack guards'}), h('table', {class: 'data'}, e.guards.map((g) =>
        h('tr', null, h('td', {text: g.name}), h('td', {text: g.action}), h('td', {text: g.message})))));
    if (e.runtime_error) append(box, h('h3', {text: 'runtime error'}), h('pre', {class: 'wrap', text: e.runtime_error}));
    if (c && c.log && !c.ok) append(box, fold('compiler output', () => h('pre', {text: c.log})));
    if (e.worker_log_tail) append(box, fold('worker log (last lines)', () => h('pre', {text: e.worker_log_tail})));
    return box;
  }

  // The profile table (profiler/profile_builder.cpp's JSON) with its bound classification.
  function profileView(p) {
    if (!p) return h('p', {class: 'muted', text: 'no profile (not run, or profiling off)'});
    if (p.error) return h('p', null, 'profile failed: ' + (typeof p.error === 'string' ? p.error : JSON.stringify(p.error)));
    const kernels = p.kernels || [];
    if (!kernels.length) return h('p', null, 'no kernel ran on the GPU during one call of the candidate');
    const tot = p.totals || {}, b = p.bound || {};
    const box = h('div');
    append(box, kv([
      ['GPU time (one call)', `${fmtMs(tot.gpu_ms)} in ${tot.kernels} kernel(s), ${tot.launches} launch(es); own kernels ${fmtPct(p.own_share)}`],
      ['bound', h('span', {dataset: {bound: b.class || 'unknown'}}, h('b', {text: b.class || 'unknown'}),
        b.basis === 'counters' ? ` (${b.scope}: DRAM ${b.dram_pct}% of peak, SM ${b.sm_pct}%, issue slots ${b.issue_pct}%)` :
        b.basis === 'io_bytes' ? ` (inputs+weights+outputs alone need ${b.dram_pct}% of the measured DRAM peak; no counters)` : ' (no hardware counters)')],
      ['rule', b.rule],
      ['DRAM', p.dram ? `${fmtBytes(p.dram.bytes)} in ${fmtMs(p.dram.duration_ms)} = ${p.dram.gbps} GB/s` +
        (isNum(p.dram.pct_of_measured_peak) ? `, ${p.dram.pct_of_measured_peak}% of the measured peak ${p.measured_dram_gbps} GB/s` : '') : null],
      ['inputs+weights+outputs', p.io ? `${fmtBytes(p.io.bytes)}, ${p.io.gbps} GB/s effective` +
        (isNum(p.io.pct_of_measured_peak) ? `, ${p.io.pct_of_measured_peak}% of peak` : '') : null],
      ['hardware counters', p.counters_available ? (p.counters && p.counters.note ? p.counters.note : 'collected') : 'not available (' + (p.counters_reason || 'not collected') + ')'],
    ]));
    const cols = ['share', 'time', 'calls', 'grid', 'block', 'regs', 'smem', 'occupancy', 'waves', 'DRAM %', 'SM %', 'bound', 'source', 'kernel'];
    append(box, h('div', {class: 'scroll'}, h('table', {class: 'data profile'},
      h('tr', null, cols.map((c, i) => h('th', {class: i < 11 ? 'num' : '', text: c}))),
      kernels.map((k) => {
        const occ = k.occupancy || {}, cn = k.counters || {};
        return h('tr', null,
          h('td', {class: 'num', text: (k.share_pct || 0).toFixed(1) + '%'}), h('td', {class: 'num', text: fmtMs(k.total_ms)}),
          h('td', {class: 'num', text: k.calls}), h('td', {class: 'num', text: dims(k.grid)}), h('td', {class: 'num', text: dims(k.block)}),
          h('td', {class: 'num', text: k.registers}), h('td', {class: 'num', text: fmtBytes((k.static_smem || 0) + (k.dynamic_smem || 0))}),
          h('td', {class: 'num', text: isNum(occ.theoretical) ? fmtPct(occ.theoretical, 0) + (occ.limiter ? ' (' + occ.limiter + ')' : '') : '-'}),
          h('td', {class: 'num', text: isNum(k.waves) ? k.waves.toFixed(2) : '-'}),
          h('td', {class: 'num', text: isNum(cn.dram_pct) ? cn.dram_pct + '%' : '-'}), h('td', {class: 'num', text: isNum(cn.sm_pct) ? cn.sm_pct + '%' : '-'}),
          h('td', {text: k.bound ? k.bound.class : '-'}), h('td', {text: k.source || (k.own ? 'own' : '')}),
          h('td', {title: k.name, text: k.name.length > 90 ? k.name.slice(0, 90) + '\u2026' : k.name}));
      }))));
    if (p.text) append(box, fold('the profile as the model read it', () => h('pre', {text: p.text})));
    return box;
  }

  // A folded block whose content is drawn the first time it is opened.
  function fold(title, draw, open) {
    const d = h('details', {class: 'fold'}, h('summary', {text: title}));
    let drawn = false;
    const fill = () => { if (!drawn) { drawn = true; d.appendChild(draw()); } };
    d.addEventListener('toggle', () => { if (d.open) fill(); });
    if (open) { d.open = true; fill(); }
    return d;
  }

  function turnSummary(t) {
    const timing = isNum(t.candidate_ms) ? ` · ${fmtMs(t.candidate_ms)} \u00b1${fmtPct(t.noise)}` : '';
    const speed = isNum(t.speedup_eager) ? ` · ${fmtX(t.speedup_eager)} over eager, ${fmtX(t.speedup_compiled)} over torch.compile` : '';
    return [h('b', {text: 'turn ' + (t.index + 1)}), ' ', badge(t.verdict), h('span', {class: 'msg', text: (t.message || '') + speed + timing})];
  }

  function turnCard(run, sample, t) {
    const prev = t.index > 0 ? sample.turns[t.index - 1] : null;
    const d = h('details', {class: 'turn', id: `turn-${sample.sample}-${t.index}`, dataset: {sample: sample.sample, turn: t.index}}, h('summary', null, turnSummary(t)));
    let drawn = false;
    d.addEventListener('toggle', () => {
      if (!d.open || drawn) return;
      drawn = true;
      const body = h('div', {class: 'turn-body'});
      if (t.eval === undefined) {  // compact (collection) turn: numbers only
        append(body, h('p', {class: 'muted', text: 'turn details (code, reasoning, feedback, profile) are on the run page: kagent report ' + run.dir}));
      } else {
        append(body,
          fold(prev ? `feedback the model got (on turn ${prev.index + 1})` : 'what the model got: the task (see "Prompt" below)',
            () => h('pre', {class: 'wrap', text: prev ? prev.feedback || '(none recorded)' : (run.prompt && run.prompt.task) || '(not recorded)'}), !!prev),
          fold('reasoning' + (t.reasoning ? ` (${t.reasoning.length} characters)` : ' (none)'), () => h('pre', {class: 'wrap', text: t.reasoning || '(none)'})),
          h('h3', {text: 'code'}), codeView(t, prev),
          h('h3', {text: 'evaluation'}), evaluationView(t),
          h('h3', {text: 'profile'}), profileView(t.eval && t.eval.profile),
          fold('feedback on this turn (what the next turn got)', () => h('pre', {class: 'wrap', text: t.feedback || '(none)'})),
          kv([['tokens', t.token_counts ? `${fmtInt(t.token_counts.prompt)} prompt, ${fmtInt(t.token_counts.completion)} completion, ${fmtInt(t.token_counts.reasoning)} reasoning` : null],
              ['model time', fmtSec(t.llm_seconds)], ['reward', isNum(t.reward) ? t.reward.toFixed(3) : null]]));
      }
      d.appendChild(body);
    });
    return d;
  }

  // ---- a problem: header cards, grid, charts, turns (run page, collection section) ------

  function problemView(run, opts) {
    const box = h('div');
    const turnsBox = h('div', {id: opts.turnsId});
    let shown = null;
    const showSample = (sm, t) => {
      if (!shown || shown.sample !== sm.sample) {
        shown = sm;
        turnsBox.replaceChildren(h('h3', {text: `sample ${sm.sample}: ${sm.turns.length} turn(s), ${sm.status}` + (sm.stop_reason && sm.stop_reason !== 'none' ? ` (${sm.stop_reason})` : '')}),
          ...sm.turns.map((x) => turnCard(run, sm, x)));
      }
      box.querySelectorAll('td.cell.selected').forEach((c) => c.classList.remove('selected'));
      if (t) {
        const cell = box.querySelector(`td.cell[data-sample="${sm.sample}"][data-turn="${t.index}"]`);
        if (cell) cell.classList.add('selected');
        const card = turnsBox.querySelector(`details.turn[data-turn="${t.index}"]`);
        if (card) { card.open = true; if (opts.scroll) card.scrollIntoView({block: 'nearest'}); }
      }
    };
    append(box, h('h2', {text: 'Samples \u00d7 turns'}), drawGrid(run, (sm, t) => { opts.scroll = true; showSample(sm, t); }));

    const charts = h('div', {class: 'charts'});
    const turns = run.config && run.config.turns || 0;
    const timedSamples = run.samples.filter((sm) => sm.turns.length);
    timedSamples.forEach((sm, i) => {
      const slot = h('div', {class: 'chart-slot', style: 'min-width:376px;min-height:220px'});
      charts.appendChild(slot);
      const draw = () => slot.replaceWith(speedupChart(sm, turns, `sample ${sm.sample}: speedup by turn`));
      if (i < 8) draw(); else whenVisible(slot, draw);
    });
    append(box, h('h2', {text: 'Speedup by turn'}), timedSamples.length ? charts : h('p', {class: 'muted', text: 'no turn recorded yet'}));
    append(box, h('h2', {text: 'Turns'}), h('p', {class: 'muted', text: 'click a cell of the grid for another sample or turn'}), turnsBox);
    // Open the best turn, else the first sample's last turn.
    const best = run.best;
    const first = best ? run.samples.find((sm) => sm.sample === best.sample) : timedSamples[0];
    if (first) showSample(first, first.turns[best ? best.turn : first.turns.length - 1]);
    return box;
  }

  function warningsView(list, extra) {
    const all = (extra || []).concat(list || []);
    if (!all.length) return null;
    return h('div', {class: 'warn', id: 'warnings'}, h('b', {text: 'Note'}), h('ul', null, all.map((w) => h('li', {text: w}))));
  }

  function card(k, v, sub) {
    return h('div', {class: 'card'}, h('div', {class: 'k', text: k}), h('div', {class: 'v', text: v}), sub ? h('div', {class: 's', text: sub}) : null);
  }

  function baselineText(st) { return st ? `${fmtMs(st.median_ms)} \u00b1${fmtPct(st.rel_stdev)}` : '-'; }

  function runCards(run) {
    const b = run.best, bl = run.baselines || {};
    const turnsAll = run.samples.reduce((n, sm) => n + sm.turns.length, 0);
    const correct = run.samples.reduce((n, sm) => n + sm.turns.filter((t) => t.verdict === 'correct').length, 0);
    return h('div', {class: 'cards'},
      card('best kernel', b ? fmtX(b.speedup_eager) + ' over eager' : 'none correct', b ? `${fmtX(b.speedup_compiled)} over torch.compile · sample ${b.sample}, turn ${b.turn + 1}` : ''),
      card('samples', `${run.samples_finished} of ${run.samples_expected} finished`, run.samples_running ? `${run.samples_running} in progress` : ''),
      card('turns', `${correct} of ${turnsAll} correct`),
      card('tokens', fmtInt(run.tokens && run.tokens.total), run.tokens ? `prompt ${fmtInt(run.tokens.prompt)}, completion ${fmtInt(run.tokens.completion)}` : ''),
      card('time', fmtSec(run.llm_seconds + run.eval_seconds), `model ${fmtSec(run.llm_seconds)}, evaluation ${fmtSec(run.eval_seconds)}`),
      card('eager', baselineText(bl.eager), 'median \u00b1 noise'),
      card('torch.compile', baselineText(bl.compiled), 'median \u00b1 noise'));
  }

  function drawRunPage(run) {
    const p = run.problem || {}, m = run.model || {}, v = run.versions || {}, dev = run.device || {};
    const state = run.finished ? null :
      `This run has not finished: ${run.samples_finished} of ${run.samples_expected} samples are recorded in trajectories.jsonl` +
      (run.samples_running ? `, ${run.samples_running} in progress (partial/ holds their turns so far)` : '') +
      '. It is still running, or was stopped (kagent solve --resume continues it).';
    append(app,
      h('header', {class: 'top'}, h('h1', {text: 'kagent run \u00b7 ' + (p.name || run.id)}),
        h('div', {class: 'meta'}, [
          p.level ? 'level ' + p.level : null, p.op_type, m.model || m.provider ? 'model ' + (m.model || m.provider) : null,
          'GPU ' + (dev.name || v.gpu || 'none'), v.torch ? 'torch ' + v.torch : null, v.cuda ? 'CUDA ' + v.cuda : null,
          'run ' + run.id].filter(Boolean).map((x) => h('span', {text: x})))),
      h('main', null,
        warningsView(run.warnings, state ? [state] : []),
        h('section', null, runCards(run)),
        h('section', null, problemView(run, {turnsId: 'turns'})),
        run.best && run.best.code ? h('section', null, h('h2', {text: `Best kernel (${run.best.file})`}), fold('code', () => h('pre', {text: run.best.code}))) : null,
        h('section', null, h('h2', {text: 'Prompt'}),
          fold('system prompt', () => h('pre', {class: 'wrap', text: (run.prompt && run.prompt.system) || '(not recorded)'})),
          fold('task', () => h('pre', {class: 'wrap', text: (run.prompt && run.prompt.task) || '(not recorded)'})),
          fold('run settings (config.json)', () => h('pre', {text: JSON.stringify(run.config, null, 2)})))),
      footer());
    markDrawn();
  }

  // ---- collection ----------------------------------------------------------------------

  const OUTCOME_ORDER = ['solved', 'unsolved', 'failed', 'running', 'problem_error', 'not_started', 'unreadable'];
  const BASELINES = {eager: 'eager', compiled: 'torch.compile'};

  // The lazily drawn rows of a table: the first chunk now, the next when the end is near.
  function lazyRows(tbody, rows, drawRow) {
    tbody.replaceChildren();
    let next = 0;
    const sentinelRow = h('tr', {class: 'more-row'}, h('td', {colspan: 99, class: 'more'}));
    const more = () => {
      const end = Math.min(rows.length, next + ROW_CHUNK);
      const frag = document.createDocumentFragment();
      for (; next < end; ++next) frag.appendChild(drawRow(rows[next], next));
      sentinelRow.remove();
      tbody.appendChild(frag);
      if (next < rows.length) {
        sentinelRow.firstChild.replaceChildren(`${rows.length - next} more rows are drawn as you scroll \u00b7 `,
          h('a', {href: '#', onclick: (ev) => { ev.preventDefault(); while (next < rows.length) more(); }}, 'draw all'));
        tbody.appendChild(sentinelRow);
        whenVisible(sentinelRow, more);
      }
    };
    more();
  }

  // The policies in the page's order: the collection's own (its --policy) first.
  function policyOrder(c) {
    const names = Object.keys(c.policies || {});
    const ruling = c.policy || names[0];
    return ruling ? [ruling].concat(names.filter((p) => p !== ruling)) : [];
  }

  // Why a baseline's speedups are n/a, or null where some turn was timed against it. Collections
  // written before the page data counted timings say nothing, and their numbers stand.
  function untimedReason(c, base) {
    const timed = (c.timed_turns || {})[base];
    if (!isNum(timed) || timed > 0) return null;
    return base === 'compiled' ? 'torch.compile was never timed (no turn has a torch.compile time)' : 'no turn was timed against eager';
  }

  // One row per level and policy, both policies side by side (the collection's own first). A
  // speedup never measured is n/a, not 0%: 0% would say the kernels were all slower.
  function metricsTable(c, base) {
    const metrics = c.metrics || {};
    const ruling = metrics.policy || c.policy;
    const byPolicy = metrics.policies && Object.keys(metrics.policies).length ? metrics.policies : {[ruling || '']: metrics.groups || []};
    const order = [ruling].concat(Object.keys(byPolicy).filter((p) => p !== ruling)).filter((p) => p !== undefined && byPolicy[p]);
    const first = byPolicy[order[0]] || [];
    if (!first.length) return h('p', {class: 'muted', text: 'no metrics yet'});
    const na = untimedReason(c, base);
    const speed = (text) => (na ? h('td', {class: 'num na', title: na, text: 'n/a'}) : h('td', {class: 'num', text}));
    const ks = Object.keys(first[first.length - 1].pass_at_k || {});
    const ps = Object.keys(((first[0].fast_p || {})[base]) || {});
    const turns = ((first[0].fast1_by_turn || {})[base] || []).length;
    const head = ['policy', 'level', 'problems', 'samples', 'correct'].concat(ps.map((p) => 'fast_' + p), ['geomean'],
      ks.map((k) => 'pass@' + k), ks.map((k) => 'fast_1@' + k), turns ? ['fast_1 by turn'] : [], ['tokens / problem', 'GPU-s / problem']);
    const rows = [];
    for (const policy of order) for (const g of byPolicy[policy]) rows.push(h('tr', {dataset: {level: g.level, policy}, class: policy === ruling ? '' : 'other-policy'},
      h('td', {text: policy + (policy === ruling ? ' (the collection\'s)' : '')}),
      h('td', {text: g.level === 'all' ? 'all' : 'level ' + g.level}), h('td', {class: 'num', text: fmtInt(g.problems)}), h('td', {class: 'num', text: fmtInt(g.samples)}),
      h('td', {class: 'num', text: fmtPct(g.correct_rate)}),
      ps.map((p) => speed(fmtPct(((g.fast_p || {})[base] || {})[p]))),
      speed(fmtX((g.geomean_speedup || {})[base])),
      ks.map((k) => h('td', {class: 'num', text: fmtPct((g.pass_at_k || {})[k])})),
      ks.map((k) => speed(fmtPct(((g.fast1_at_k || {})[base] || {})[k]))),
      turns ? speed(((g.fast1_by_turn || {})[base] || []).map((x) => fmtPct(x, 0)).join(' \u2192 ')) : null,
      h('td', {class: 'num', text: fmtInt((g.cost || {}).tokens_per_problem)}), h('td', {class: 'num', text: fmtSec((g.cost || {}).gpu_seconds_per_problem)})));
    return h('div', null, na ? h('p', {class: 'warn', id: 'untimed-note', text: `n/a: ${na}, so fast_p, geomean and fast_1 over it were never measured.`}) : null,
      h('div', {class: 'scroll'}, h('table', {class: 'data', id: 'metrics-table'}, h('tr', null, head.map((x, i) => h('th', {class: i > 1 ? 'num' : '', text: x}))), rows)));
  }

  // The turns by verdict under each policy: every failure kind and each guard's rejections on
  // their own row, so a compile error, a kernel that was not one and a wrong answer differ.
  const VERDICT_ORDER = ['correct', 'wrong', 'compile_error', 'runtime_error', 'timeout', 'crash', 'invalid', 'rejected',
    'internal_error', 'problem_error', 'no_gpu', 'no_verdict'];
  function breakdownLabel(key) {
    const [head, rest] = key.split(/:(.*)/s);
    if (head === 'rejected') return 'rejected: ' + rest;
    if (head === 'no_verdict') return 'no verdict: ' + ({format: 'no code in the answer', llm: 'the LLM call failed', eval: 'not evaluated', pending: 'in flight'}[rest] || rest);
    return key.replace(/_/g, ' ');
  }
  function verdictBreakdown(c) {
    const order = policyOrder(c);
    if (!order.length) return h('p', {class: 'muted', text: 'no turns yet'});
    const keys = new Set();
    for (const p of order) for (const k of Object.keys((c.policies[p] || {}).verdicts || {})) keys.add(k);
    const rank = (k) => { const i = VERDICT_ORDER.indexOf(k.split(':')[0]); return i < 0 ? VERDICT_ORDER.length : i; };
    const sorted = [...keys].sort((a, b) => rank(a) - rank(b) || a.localeCompare(b));
    const head = ['verdict'].concat(order.flatMap((p) => [p + (p === c.policy ? ' (the collection\'s)' : '') + ': turns', 'share']));
    return h('div', {class: 'scroll'}, h('table', {class: 'data', id: 'verdicts-table'},
      h('tr', null, head.map((x, i) => h('th', {class: i ? 'num' : '', text: x}))),
      sorted.map((k) => h('tr', {dataset: {verdict: k}}, h('td', null, h('span', {class: 'badge v-' + (k.startsWith('no_verdict:') ? k.slice(11) : k.split(':')[0]), text: breakdownLabel(k)})),
        order.flatMap((p) => {
          const pol = c.policies[p] || {}, n = (pol.verdicts || {})[k] || 0;
          return [h('td', {class: 'num', dataset: {policy: p}, text: fmtInt(n)}), h('td', {class: 'num', text: pol.turns ? fmtPct(n / pol.turns) : '-'})];
        }))),
      h('tr', null, h('td', {class: 'muted', text: 'all turns'}), order.flatMap((p) => [h('td', {class: 'num', text: fmtInt((c.policies[p] || {}).turns)}), h('td', null)]))));
  }

  // fast_p over p, from every finished sample: the share of samples correct and more than p
  // times faster than the baseline; one line per level and one for all.
  function fastPChart(problems, base, metrics, policy, na) {
    if (na) return h('div', {class: 'chart', dataset: {chart: 'fast_p'}}, h('div', {class: 'title', text: `fast_p over p (${BASELINES[base]})`}),
      h('p', {class: 'muted na', text: 'n/a: ' + na}));
    const key = base === 'eager' ? 'speedup_eager' : 'speedup_compiled';
    const byLevel = {all: []};
    for (const pr of problems) for (const s of pr.sample_speedups || []) {
      const sp = (s.policies || {})[policy] || s;
      const x = sp.correct ? (isNum(sp[key]) ? sp[key] : 0) : -1;
      byLevel.all.push(x);
      if (pr.level) (byLevel[pr.level] = byLevel[pr.level] || []).push(x);
    }
    // Problems that could not run count as failed samples (as in the metrics).
    const perProblem = (metrics && metrics.samples_per_problem) || 1;
    for (const pr of problems) if (pr.outcome === 'problem_error') for (let i = 0; i < perProblem; ++i) {
      byLevel.all.push(-1);
      if (pr.level) (byLevel[pr.level] = byLevel[pr.level] || []).push(-1);
    }
    const maxP = 3, steps = 120;
    const series = Object.keys(byLevel).sort((a, b) => (a === 'all') - (b === 'all') || a.localeCompare(b)).map((lv) => {
      const xs = byLevel[lv].slice().sort((a, b) => a - b), n = xs.length;
      const points = [];
      let i = 0;
      for (let k = 0; k <= steps; ++k) {
        const p = maxP * k / steps;
        while (i < n && xs[i] <= p) ++i;
        points.push([p, n ? (n - i) / n : null]);
      }
      return {cls: 's-l' + (['1', '2', '3', 'all'].includes(lv) ? lv : 'other'), label: lv === 'all' ? 'all levels' : 'level ' + lv, points};
    });
    return lineChart({kind: 'fast_p', title: `fast_p over p (${BASELINES[base]}, ${policy} verdicts): share of samples correct and > p times faster`,
      width: 460, height: 240, xMin: 0, xMax: maxP, yMin: 0, yMax: 1, xTicks: [0, 0.5, 1, 1.5, 2, 2.5, 3], yTicks: [0, 0.25, 0.5, 0.75, 1],
      yFmt: (y) => Math.round(y * 100) + '%', xLabel: 'p', ref: null, series, keyed: true});
  }

  // Best speedup per problem, in power-of-two bins.
  function distributionChart(problems, base, policy) {
    const key = base === 'eager' ? 'best_speedup_eager' : 'best_speedup_compiled';
    const lo = -4, hi = 4;  // 1/16x .. 16x
    const bins = new Array(hi - lo + 2).fill(0);
    let untimed = 0;
    for (const row of problems) {
      const pr = (row.policies || {})[policy] || row;
      if (pr.outcome !== 'solved') continue;
      const x = pr[key];
      if (!isNum(x) || x <= 0) { ++untimed; continue; }
      const b = Math.min(hi - lo + 1, Math.max(0, Math.floor(Math.log2(x)) - lo + 1));
      ++bins[b];
    }
    const W = 460, H = 240, L = 40, R = 10, T = 8, B = 36;
    const ymax = niceMax(Math.max(1, ...bins) * 1.05);
    const bw = (W - L - R) / bins.length;
    const ys = (y) => H - B - (y / ymax) * (H - T - B);
    const svg = s('svg', {width: W, height: H, viewBox: `0 0 ${W} ${H}`, role: 'img'});
    for (const y of ticksTo(ymax)) {
      svg.appendChild(s('line', {class: 'gridline', x1: L, x2: W - R, y1: ys(y), y2: ys(y)}));
      svg.appendChild(s('text', {x: L - 4, y: ys(y) + 3, 'text-anchor': 'end'}, Math.round(y)));
    }
    const label = (i) => {
      if (i === 0) return '<1/16';
      if (i === bins.length - 1) return '\u226516';
      const e = i - 1 + lo;
      return e >= 0 ? String(2 ** e) : '1/' + 2 ** -e;
    };
    bins.forEach((n, i) => {
      const x = L + i * bw;
      const r = s('rect', {class: 'bar' + (i - 1 + lo < 0 ? ' slow' : ''), x: x + 2, y: ys(n), width: bw - 4, height: Math.max(0, H - B - ys(n)), 'data-count': n});
      r.appendChild(s('title', null, `${label(i)}x: ${n} problem(s)`));
      svg.appendChild(r);
      svg.appendChild(s('text', {x: x + bw / 2, y: H - B + 12, 'text-anchor': 'middle'}, label(i)));
    });
    svg.appendChild(s('line', {class: 'axis', x1: L, x2: W - R, y1: H - B, y2: H - B}));
    svg.appendChild(s('text', {x: (L + W - R) / 2, y: H - 6, 'text-anchor': 'middle'}, `best speedup over ${BASELINES[base]} (bins from the left edge, x)`));
    return h('div', {class: 'chart', dataset: {chart: 'distribution'}}, h('div', {class: 'title', text: `speedup distribution: solved problems (${policy} verdicts) by best speedup over ${BASELINES[base]}`}), svg,
      h('div', {class: 'chart-legend', text: untimed ? `${untimed} solved problem(s) without a timing are not shown` : 'orange: slower than the baseline'}));
  }

  function problemsTable(problems, policies, ruling) {
    const under = (pr, p) => (pr.policies || {})[p] || {};
    const cols = [
      {key: 'rank', label: '#', num: true, sort: null},
      {key: 'name', label: 'problem', sort: (a, b) => a.name.localeCompare(b.name)},
      {key: 'level', label: 'level', sort: (a, b) => (a.level || '').localeCompare(b.level || '')},
      {key: 'op_type', label: 'op type', sort: (a, b) => (a.op_type || '').localeCompare(b.op_type || '')},
      {key: 'outcome', label: 'outcome', sort: (a, b) => OUTCOME_ORDER.indexOf(a.outcome) - OUTCOME_ORDER.indexOf(b.outcome)},
      {key: 'best_speedup_eager', label: 'best vs eager', num: true},
      {key: 'best_speedup_compiled', label: 'best vs torch.compile', num: true},
    ].concat(policies.map((p) => ({key: 'correct:' + p, label: 'correct samples (' + p + ')', num: true, policy: p,
      sort: (a, b) => (isNum(under(a, p).samples_correct) ? under(a, p).samples_correct : -1) - (isNum(under(b, p).samples_correct) ? under(b, p).samples_correct : -1)})), [
      {key: 'tokens', label: 'tokens', num: true},
      {key: 'gpu_seconds', label: 'GPU-s', num: true},
    ]);
    const numSort = (k) => (a, b) => (isNum(a[k]) ? a[k] : -Infinity) - (isNum(b[k]) ? b[k] : -Infinity);
    // Default order: outcome, then speedup over eager, best first.
    let sortKey = 'outcome', dir = 1;
    const byOutcome = (a, b) => cols[4].sort(a, b) || numSort('best_speedup_eager')(b, a) || a.name.localeCompare(b.name);
    const tbody = h('tbody');
    const filter = h('input', {type: 'search', placeholder: 'filter problems by name', 'aria-label': 'filter'});
    const heads = cols.map((c) => h('th', {class: (c.num ? 'num ' : '') + (c.key === 'rank' ? '' : 'sortable'), dataset: {key: c.key}, text: c.label}));
    const drawRow = (pr, i) => h('tr', {dataset: {problem: pr.name, outcome: pr.outcome}},
      h('td', {class: 'num muted', text: i + 1}),
      h('td', null, h('a', {href: '#problem=' + encodeURIComponent(pr.name), text: pr.name})),
      h('td', {text: pr.level || ''}), h('td', {text: pr.op_type || ''}),
      h('td', null, h('span', {class: 'badge o-' + pr.outcome, text: pr.outcome.replace('_', ' ')}), pr.reason ? h('span', {class: 'muted', title: pr.reason, text: ' ' + pr.reason.slice(0, 60)}) : null,
        // Where another policy judges the problem otherwise (a kernel strict rejects), say so on the row.
        policies.filter((p) => p !== ruling && under(pr, p).outcome && under(pr, p).outcome !== pr.outcome)
          .map((p) => h('span', {class: 'muted other-outcome', dataset: {policy: p}, text: ` ${p}: ${under(pr, p).outcome.replace('_', ' ')}`}))),
      h('td', {class: 'num', text: fmtX(pr.best_speedup_eager)}), h('td', {class: 'num', text: fmtX(pr.best_speedup_compiled)}),
      policies.map((p) => h('td', {class: 'num', dataset: {policy: p}, text: isNum(pr.samples_done) && isNum(under(pr, p).samples_correct) ? `${under(pr, p).samples_correct}/${pr.samples_done}` : '-'})),
      h('td', {class: 'num', text: fmtInt(pr.tokens)}), h('td', {class: 'num', text: fmtSec(pr.gpu_seconds)}));
    const redraw = () => {
      const col = cols.find((c) => c.key === sortKey);
      const cmp = sortKey === 'outcome' ? byOutcome : col.sort || numSort(sortKey);
      const q = filter.value.trim().toLowerCase();
      const rows = problems.filter((p) => !q || p.name.toLowerCase().includes(q)).sort((a, b) => dir * cmp(a, b));
      heads.forEach((th) => th.classList.remove('sorted-asc', 'sorted-desc'));
      heads[cols.indexOf(col)].classList.add(dir > 0 ? 'sorted-asc' : 'sorted-desc');
      lazyRows(tbody, rows, drawRow);
    };
    heads.forEach((th, i) => {
      if (cols[i].key === 'rank') return;
      th.addEventListener('click', () => {
        const k = cols[i].key;
        // Numbers sort high first on the first click; names and outcome in their order.
        dir = sortKey === k ? -dir : (cols[i].num ? -1 : 1);
        sortKey = k;
        redraw();
      });
    });
    filter.addEventListener('input', redraw);
    redraw();
    return h('div', null, h('div', {class: 'toolbar'}, filter, h('span', {class: 'muted', text: 'click a column to sort; a name opens its section'})),
      h('div', {class: 'scroll'}, h('table', {class: 'data', id: 'problems-table'}, h('thead', null, h('tr', null, heads)), tbody)));
  }

  function baselinesView(bl) {
    if (!bl) return h('p', {class: 'muted', text: 'no baselines.json in this collection'});
    const rows = bl.rows || [];
    const tbody = h('tbody');
    const table = h('table', {class: 'data', id: 'baselines-table'},
      h('thead', null, h('tr', null, ['problem', 'level', 'eager', 'noise', 'torch.compile', 'noise', 'compile error'].map((c, i) => h('th', {class: i >= 2 && i <= 5 ? 'num' : '', text: c})))), tbody);
    const d = fold(`${rows.length} problem(s) timed on ${bl.gpu || 'unknown GPU'} with torch ${bl.torch || '?'}`, () => {
      lazyRows(tbody, rows, (r) => h('tr', null, h('td', {text: r.problem}), h('td', {text: r.level === undefined ? '' : r.level}),
        h('td', {class: 'num', text: fmtMs(r.eager_ms)}), h('td', {class: 'num', text: fmtPct(r.eager_noise)}),
        h('td', {class: 'num', text: fmtMs(r.compiled_ms)}), h('td', {class: 'num', text: fmtPct(r.compiled_noise)}),
        h('td', {text: r.compiled_error || ''})));
      return h('div', {class: 'scroll'}, table);
    });
    return h('div', null, h('div', {class: 'cards'}, card('GPU', bl.gpu || '-'), card('torch', bl.torch || '-'), card('problems timed', fmtInt(rows.length))), d);
  }

  function costView(c, problems) {
    let tokens = 0, gpu = 0;
    for (const p of problems) { tokens += p.tokens || 0; gpu += p.gpu_seconds || 0; }
    const sm = c.summary || {};
    const groups = (c.metrics && c.metrics.groups) || [];
    return h('div', null, h('div', {class: 'cards'},
      card('tokens', fmtInt(tokens), problems.length ? fmtInt(tokens / problems.length) + ' per problem' : ''),
      card('GPU-seconds', fmtSec(gpu), problems.length ? fmtSec(gpu / problems.length) + ' per problem' : ''),
      isNum(sm.wall_seconds) ? card('wall time', fmtSec(sm.wall_seconds)) : null,
      isNum(sm.evaluations) ? card('evaluations', fmtInt(sm.evaluations), isNum(sm.evals_per_gpu_minute) ? sm.evals_per_gpu_minute.toFixed(1) + ' per GPU-minute' : '') : null),
      groups.length ? h('table', {class: 'data'}, h('tr', null, ['level', 'tokens / problem', 'GPU-s / problem'].map((x, i) => h('th', {class: i ? 'num' : '', text: x}))),
        groups.map((g) => h('tr', null, h('td', {text: g.level}), h('td', {class: 'num', text: fmtInt((g.cost || {}).tokens_per_problem)}),
          h('td', {class: 'num', text: fmtSec((g.cost || {}).gpu_seconds_per_problem)})))) : null);
  }

  function problemSection(pr) {
    const box = h('section', {class: 'problem-section', id: 'problem-section', dataset: {problem: pr.name}},
      h('h2', null, 'Problem ', h('b', {text: pr.name}), ' ', h('span', {class: 'badge o-' + pr.outcome, text: pr.outcome.replace('_', ' ')}),
        ' ', h('a', {href: '#problems', text: 'back to the table'})));
    if (!pr.run) {
      append(box, h('p', null, pr.outcome === 'problem_error' ? 'The problem could not run: ' + (pr.reason || '') :
        pr.outcome === 'not_started' ? 'No sample of this problem has run yet.' : 'Its run folder could not be read (see the notes at the top).'));
      return box;
    }
    const run = pr.run;
    append(box, h('p', {class: 'muted'}, 'level ' + (pr.level || '?') + ' · ' + (pr.op_type || '') + ' · run folder ', h('code', {text: run.dir}),
      ' · the turns\' code, reasoning, feedback and profiles: ', h('code', {text: 'kagent report ' + run.dir})),
      warningsView(run.warnings), runCards(run), problemView(run, {turnsId: 'problem-turns', scroll: false}),
      run.best && run.best.code ? fold(`best kernel (${run.best.file}, sample ${run.best.sample}, turn ${run.best.turn + 1})`, () => h('pre', {text: run.best.code}), true) : null);
    return box;
  }

  function drawCollectionPage(c) {
    const man = c.manifest || {}, cfg = man.config || {}, ver = man.versions || {}, problems = c.problems || [];
    const count = (o) => problems.filter((p) => p.outcome === o).length;
    const llm = cfg.llm || cfg.model || {};
    const modelName = typeof llm === 'string' ? llm : (llm.model || llm.provider || '');
    const policies = policyOrder(c);
    let base = 'eager', policy = policies[0];
    const metricsBox = h('div'), chartsBox = h('div', {class: 'charts'});
    const drawBaselineViews = () => {
      metricsBox.replaceChildren(metricsTable(c, base));
      chartsBox.replaceChildren(fastPChart(problems, base, c.metrics, policy, untimedReason(c, base)), distributionChart(problems, base, policy));
    };
    const toggles = Object.entries(BASELINES).map(([k, label]) => h('button', {class: k === base ? 'on' : '', text: 'vs ' + label, dataset: {base: k}}));
    toggles.forEach((b) => b.addEventListener('click', () => {
      base = b.dataset.base;
      toggles.forEach((x) => x.classList.toggle('on', x === b));
      drawBaselineViews();
    }));
    // The charts count one policy's verdicts at a time; the tables show both.
    const policyToggles = policies.map((p) => h('button', {class: p === policy ? 'on' : '', text: p + ' verdicts', dataset: {policy: p}}));
    policyToggles.forEach((b) => b.addEventListener('click', () => {
      policy = b.dataset.policy;
      policyToggles.forEach((x) => x.classList.toggle('on', x === b));
      drawBaselineViews();
    }));
    const sectionBox = h('div', {id: 'problem-sections'});
    const openFromHash = () => {
      const m = /^#problem=(.*)$/.exec(location.hash);
      if (!m) return;
      const name = decodeURIComponent(m[1]);
      const pr = problems.find((p) => p.name === name);
      if (!pr) return;
      sectionBox.replaceChildren(problemSection(pr));
      sectionBox.scrollIntoView({block: 'start'});
    };
    // metrics.json carries a computed_by too (collect's); metrics_source says which it was.
    const source = c.metrics_source === 'computed' ? 'computed from the samples (the collection has no metrics.json yet)' :
      'from metrics.json' + ((c.metrics || {}).policies_computed ? ' (the other policy\'s rows computed from the samples: the file predates policies)' : '');
    append(app,
      h('header', {class: 'top'}, h('h1', {text: 'kagent collection \u00b7 ' + (c.dir || '').split('/').pop()}),
        h('div', {class: 'meta'}, [
          modelName ? 'model ' + modelName : null, cfg.samples ? `${cfg.samples} sample(s) \u00d7 ${cfg.turns} turn(s)` : null,
          ver.gpu ? 'GPU ' + ver.gpu : null, ver.torch ? 'torch ' + ver.torch : null, ver.kagent ? 'kagent ' + ver.kagent : null,
          man.shard ? `shard ${man.shard.index + 1} of ${man.shard.count}` : null, man.created_at ? 'created ' + man.created_at : null]
          .filter(Boolean).map((x) => h('span', {text: x})))),
      h('main', null,
        warningsView(c.warnings),
        h('section', null, h('div', {class: 'cards'},
          card('problems', fmtInt(problems.length), `${count('solved')} solved${c.policy ? ' (' + c.policy + ')' : ''}, ${count('unsolved') + count('failed')} unsolved, ${count('problem_error')} could not run` +
            (count('running') ? `, ${count('running')} running` : '') + (count('not_started') ? `, ${count('not_started')} not started` : '')),
          card('samples', fmtInt(problems.reduce((n, p) => n + (p.samples_done || 0), 0)), 'finished'),
          card('correct samples', fmtInt(problems.reduce((n, p) => n + (p.samples_correct || 0), 0))),
          policies.map((p) => h('div', {class: 'card policy-card', dataset: {policy: p}}, h('div', {class: 'k', text: 'solved under ' + p + (p === c.policy ? ' (the collection\'s)' : '')}),
            h('div', {class: 'v', text: fmtInt(c.policies[p].problems_solved)}), h('div', {class: 's', text: `${fmtInt(c.policies[p].samples_correct)} correct sample(s)`}))))),
        h('section', null, h('h2', {text: 'Metrics by level and policy'}), h('div', {class: 'toolbar tabs'}, toggles,
          h('span', {class: 'muted', id: 'metrics-source', text: source})), metricsBox),
        h('section', null, h('h2', {text: 'Verdicts by policy'}), verdictBreakdown(c)),
        h('section', null, h('h2', {text: 'fast_p and speedups'}), policies.length > 1 ? h('div', {class: 'toolbar tabs'}, policyToggles) : null, chartsBox),
        h('section', {id: 'problems'}, h('h2', {text: 'Problems'}), problemsTable(problems, policies, c.policy)),
        sectionBox,
        h('section', null, h('h2', {text: 'Cost'}), costView(c, problems)),
        h('section', null, h('h2', {text: 'Baselines'}), baselinesView(c.baselines)),
        h('section', null, h('h2', {text: 'Settings'}), fold('manifest.json (without the problem list)', () => h('pre', {text: JSON.stringify(man, null, 2)})))),
      footer());
    drawBaselineViews();
    window.addEventListener('hashchange', openFromHash);
    markDrawn();
    openFromHash();
  }

  function footer() {
    return h('footer', null, `Written by kagent ${DATA.kagent_version} at ${DATA.generated_at}. One self-contained file: no network needed. ` +
      'Code diffs by jsdiff 5.0.0 (BSD 3-Clause License, in this page\'s source).');
  }

  // The moment the main table is on screen: what the benchmark and the browser test wait for.
  function markDrawn() {
    performance.mark('kagent-table-drawn');
    document.body.dataset.drawn = '1';
  }

  try {
    if (DATA.kind === 'run') drawRunPage(DATA.run);
    else if (DATA.kind === 'collection') drawCollectionPage(DATA.collection);
    else throw new Error('unknown page kind ' + DATA.kind);
  } catch (err) {
    app.replaceChildren(h('div', {class: 'warn'}, 'This page could not be drawn: ' + err.message));
    document.body.dataset.error = err.message;
    throw err;
  }
})();
