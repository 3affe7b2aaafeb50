// gpuplan's page: forms -> POST /v1/... -> the plan documents -> tables and Chart.js charts.
// Machine-readable state for tests: body[data-ready="1"] once every started request has been
// rendered, canvas[data-drawn="1"] once a chart has been drawn, textarea#*-request/#*-doc hold
// the last request body and response document.
'use strict';
(function () {
  const params = new URLSearchParams(location.search);
  const charts = {};
  let pending = 0;

  function begin() { pending++; document.body.dataset.ready = '0'; }
  function end() { if (--pending === 0) document.body.dataset.ready = '1'; }

  const drawnFlag = { id: 'drawnFlag', afterRender(chart) { chart.canvas.dataset.drawn = '1'; } };

  function draw(id, config) {
    if (charts[id]) charts[id].destroy();
    const canvas = document.getElementById(id);
    delete canvas.dataset.drawn;
    config.options = Object.assign({ animation: false, responsive: true, maintainAspectRatio: false }, config.options || {});
    config.plugins = [drawnFlag];
    charts[id] = new Chart(canvas, config);
  }

  async function post(path, body) {
    const r = await fetch(path, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
    const text = await r.text();
    let doc;
    try { doc = JSON.parse(text); } catch (e) { doc = { message: text }; }
    return { ok: r.ok, status: r.status, doc, text };
  }

  function showError(id, res) {
    const el = document.getElementById(id);
    if (!res) { el.hidden = true; el.textContent = ''; return; }
    const d = res.doc || {};
    el.hidden = false;
    el.textContent = `${res.status}: ${d.field ? d.field + ': ' : ''}${d.message || ''}${d.hint ? '\nhint: ' + d.hint : ''}`;
  }

  function table(id, head, rows) {
    const t = document.getElementById(id);
    t.innerHTML = '';
    const tr = t.insertRow();
    head.forEach(h => { const th = document.createElement('th'); th.textContent = h; tr.appendChild(th); });
    rows.forEach(r => { const row = t.insertRow(); r.forEach(c => { row.insertCell().textContent = c; }); });
  }

  const money = (v, cur) => v == null ? '-' : `${cur === 'CNY' ? '¥' : '$'}${Number(v).toLocaleString('en-US', { maximumFractionDigits: 2 })}`;
  const gib = b => (b / 1073741824).toFixed(1);
  const list = s => s.split(',').map(x => x.trim()).filter(x => x);

  let accelerators = {};

  function trainBody(f) {
    const body = { model: f.model.value, train: { method: f.method.value, data: { tokens: f.tokens.value, epochs: Number(f.epochs.value) } },
                   objective: f.objective.value, top: Number(f.top.value) };
    const c = {};
    if (list(f.clouds.value).length) c.clouds = list(f.clouds.value);
    if (f.spot.checked) c.spot = true;
    if (Object.keys(c).length) body.constraints = c;
    return body;
  }

  async function planTrain() {
    const f = document.getElementById('train-form');
    const body = trainBody(f);
    document.getElementById('train-request').textContent = JSON.stringify(body);
    begin();
    try {
      const res = await post('/v1/plan/train', body);
      document.getElementById('train-doc').textContent = res.text;
      if (!res.ok) { showError('train-error', res); return; }
      showError('train-error', null);
      renderTrain(res.doc);
    } finally { end(); }
  }

  function renderTrain(doc) {
    const cur = doc.currency;
    document.getElementById('as-of').textContent = doc.catalog_as_of;
    table('train-plans', ['#', 'cloud', 'instance', 'region', 'GPUs', 'layout', 'mem/GPU GiB', 'MFU', 'hours', 'on-demand', 'spot'],
      doc.plans.map((p, i) => [i + 1, p.cloud, p.instance_type, p.region, `${p.nodes}x${p.gpus_per_node} ${p.accelerator}`,
        `tp${p.layout.tp} pp${p.layout.pp} dp${p.layout.dp} z${p.layout.zero_stage} mb${p.layout.micro_batch}`,
        gib(p.memory_per_gpu_bytes), `${(100 * p.mfu).toFixed(0)}%`, p.job_hours.toFixed(1),
        money(p.cost_on_demand, cur), money(p.cost_spot, cur)]));
    if (!doc.plans.length) {
      showError('train-error', { status: 200, doc: { message: 'no plan fits: ' + (doc.notes || []).join('; ') } });
      return;
    }
    const pts = doc.plans.map(p => ({ x: p.job_hours, y: p.cost_on_demand, label: `${p.cloud} ${p.instance_type} x${p.nodes}` }));
    const front = (doc.pareto || []).map(p => ({ x: p.hours, y: p.cost, label: `${p.cloud} ${p.instance_type} x${p.nodes}` }))
      .sort((a, b) => a.x - b.x);
    draw('chart-pareto', { type: 'scatter', data: { datasets: [
        { label: 'ranked plans', data: pts, backgroundColor: '#4a78c2' },
        { label: 'Pareto front', data: front.length ? front : pts.slice(0, 1), showLine: true, borderColor: '#d0542c', backgroundColor: '#d0542c' }] },
      options: { scales: { x: { title: { display: true, text: 'job hours' } }, y: { title: { display: true, text: `cost (${cur})` } } },
                 plugins: { tooltip: { callbacks: { label: c => `${c.raw.label}: ${c.raw.x.toFixed(1)} h, ${money(c.raw.y, cur)}` } } } } });
    const top = doc.plans[0];
    const terms = [['weights', 'weights_bytes'], ['fp32 master', 'master_weights_bytes'], ['gradients', 'gradients_bytes'],
                   ['optimizer', 'optimizer_bytes'], ['adapter', 'adapter_bytes'], ['activations', 'activations_bytes'],
                   ['logits', 'logits_bytes'], ['runtime', 'runtime_bytes']];
    const colors = ['#4a78c2', '#7b9fd6', '#e39b3b', '#d0542c', '#8e5ab5', '#3f9e6a', '#9aa53a', '#888'];
    const acc = accelerators[top.accelerator] || {};
    const datasets = terms.map(([name, key], i) => ({ label: name, data: [top.memory[key] / 1073741824, 0], backgroundColor: colors[i] }));
    datasets.push({ label: 'GPU memory', data: [0, (acc.memory_bytes || 0) / 1073741824], backgroundColor: '#ccc' });
    draw('chart-memory', { type: 'bar', data: { labels: [`top plan (${top.accelerator})`, 'GPU capacity'], datasets },
      options: { indexAxis: 'y', scales: { x: { stacked: true, title: { display: true, text: 'GiB per GPU' } }, y: { stacked: true } } } });
    const st = top.step;
    const split = [['compute', st.compute_s], ['TP/CP comm', st.tp_comm_s], ['DP comm', st.dp_comm_s], ['PP comm', st.pp_comm_s],
                   ['bubble', st.bubble_s], ['EP comm', st.ep_comm_s], ['optimizer', st.optimizer_s]];
    draw('chart-step', { type: 'bar', data: { labels: split.map(s => s[0]), datasets: [
        { label: `seconds of a ${top.step_time_s.toFixed(3)} s step`, data: split.map(s => s[1]), backgroundColor: '#4a78c2' }] },
      options: { scales: { y: { title: { display: true, text: 's' } } } } });
  }

  function serveBody(f) {
    const body = { serve: { qps: Number(f.qps.value), input_len: Number(f.input_len.value), output_len: Number(f.output_len.value), engine: f.engine.value },
                   slo: {} };
    if (f.config.value.trim()) {
      try { body.model_config = JSON.parse(f.config.value); } catch (e) { body.model_config = f.config.value; }
    } else {
      body.model = f.model.value;
    }
    if (f.ttft.value) body.slo.ttft_p99_ms = Number(f.ttft.value);
    if (f.tpot.value) body.slo.tpot_p99_ms = Number(f.tpot.value);
    if (list(f.clouds.value).length) body.constraints = { clouds: list(f.clouds.value) };
    return body;
  }

  async function planServe() {
    const f = document.getElementById('serve-form');
    const body = serveBody(f);
    document.getElementById('serve-request').textContent = JSON.stringify(body);
    begin();
    try {
      const res = await post('/v1/plan/infer', body);
      document.getElementById('serve-doc').textContent = res.text;
      if (!res.ok) { showError('serve-error', res); return; }
      showError('serve-error', null);
      const doc = res.doc, cur = doc.currency;
      table('serve-plans', ['#', 'cloud', 'instance', 'region', 'hardware', 'replicas', 'batch', 'TTFT p99 ms', 'TPOT p99 ms', 'util', '/hour', '/month'],
        doc.plans.map((p, i) => [i + 1, p.cloud, p.instance_type, p.region, p.accelerator ? `${p.gpus_per_replica} x ${p.accelerator}` : `CPU ${p.cpu}`,
          `${p.replicas} on ${p.instances}`, p.batch, p.ttft_p99_ms.toFixed(0), p.tpot_p99_ms > 0 ? p.tpot_p99_ms.toFixed(1) : '-',
          `${(100 * p.utilization).toFixed(0)}%`, money(p.cost_per_hour, cur), money(p.cost_per_month, cur)]));
      if (!doc.plans.length) {
        // The planner's notes say why (the SLOs, the filters, or hardware the engine cannot run).
        showError('serve-error', { status: 200, doc: { message: 'no deployment: ' + ((doc.notes || []).join('; ') || 'none meets the SLOs') } });
        return;
      }
      // Replicas and cost over a day: the same job replayed over a synthetic diurnal trace.
      const sim = Object.assign({}, body, { synthetic: { days: 1, peak_rps: body.serve.qps }, policies: ['hpa', 'static'] });
      sim.serve = Object.assign({}, body.serve);
      delete sim.serve.qps;
      const s = await post('/v1/simulate', sim);
      if (!s.ok) { showError('serve-error', s); return; }
      const pol = name => s.doc.policies.find(p => p.policy === name);
      const hpa = pol('hpa'), stat = pol('static');
      const hours = hpa.timeline_hourly.map(h => (h.t_s / 3600).toFixed(0) + 'h');
      draw('chart-day', { type: 'line', data: { labels: hours, datasets: [
          { label: 'load (req/s)', data: hpa.timeline_hourly.map(h => h.rps), borderColor: '#888', yAxisID: 'y' },
          { label: 'replicas: HPA', data: hpa.timeline_hourly.map(h => h.billed_gpu), borderColor: '#4a78c2', yAxisID: 'y' },
          { label: 'replicas: static', data: stat.timeline_hourly.map(h => h.billed_gpu), borderColor: '#3f9e6a', yAxisID: 'y' },
          { label: `cost per hour: HPA (${cur})`, data: hpa.timeline_hourly.map(h => h.cost), borderColor: '#d0542c', yAxisID: 'y1' }] },
        options: { scales: { y: { title: { display: true, text: 'replicas / req/s' } },
                             y1: { position: 'right', title: { display: true, text: cur }, grid: { drawOnChartArea: false } } } } });
    } finally { end(); }
  }

  async function init() {
    begin();
    try {
      const [m, a, v] = await Promise.all([fetch('/v1/models').then(r => r.json()), fetch('/v1/accelerators').then(r => r.json()),
                                           fetch('/version').then(r => r.json())]);
      document.getElementById('version').textContent = `v${v.version}, catalog ${v.catalog_as_of}`;
      a.accelerators.forEach(x => { accelerators[x.id] = x; });
      for (const [id, def] of [['train-model', params.get('train_model') || 'Llama-2-7B'], ['serve-model', params.get('serve_model') || 'Llama-2-7B']]) {
        const sel = document.getElementById(id);
        m.models.forEach(x => { const o = document.createElement('option'); o.textContent = x.name; sel.appendChild(o); });
        sel.value = def;
      }
      document.getElementById('train-form').addEventListener('submit', e => { e.preventDefault(); planTrain(); });
      document.getElementById('serve-form').addEventListener('submit', e => { e.preventDefault(); planServe(); });
      const only = params.get('only');
      if (only) {
        document.body.classList.add('only');
        document.getElementById(only).closest('figure').classList.add('shown');
      }
      // ?auto=train,serve submits the forms as a user would (the browser test uses it).
      const auto = (params.get('auto') || '').split(',');
      if (auto.includes('train')) document.getElementById('train-form').requestSubmit();
      if (auto.includes('serve')) document.getElementById('serve-form').requestSubmit();
    } finally { end(); }
  }
  init();
})();
