import { useEffect, useRef, useState } from 'preact/hooks';
import uPlot from 'uplot';
import { api, sandboxPath } from '../api.js';
import { ErrorNote } from '../components.jsx';

const SAMPLE_MS = 3000;
const KEEP = 60;

// The width inside the box's padding: a canvas as wide as clientWidth would overflow it.
function contentWidth(box) {
  const style = getComputedStyle(box);
  return box.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
}

// One small line chart (uPlot) of `values` over `times` (seconds), the last `span` seconds.
// `floor`: the least top of the y axis, so that a flat line of small values stays readable.
export function Chart({ title, times, values, unit, span = (KEEP * SAMPLE_MS) / 1000, floor = 1 }) {
  const box = useRef(null);
  const plot = useRef(null);
  useEffect(() => {
    const color = getComputedStyle(document.documentElement).getPropertyValue('--accent').trim() || '#2457c5';
    plot.current = new uPlot({
      width: Math.min(contentWidth(box.current) || 320, 560),
      height: 140,
      legend: { show: false },
      series: [{}, { label: title, stroke: color, width: 2, fill: `${color}22` }],
      axes: [{ stroke: 'currentColor' }, { stroke: 'currentColor', size: 56, values: (u, v) => v.map((x) => `${x}${unit}`) }],
      // The whole span (for stats, the last three minutes), however few samples there are yet.
      scales: { x: { time: true, range: (u, min, max) => [max - span, max] }, y: { range: (u, min, max) => [0, Math.max(max * 1.2, floor)] } },
    }, [[], []], box.current);
    return () => plot.current.destroy();
  }, []);
  useEffect(() => { plot.current && plot.current.setData([times, values]); }, [times, values]);
  return <figure class="chart" ref={box} aria-label={title}><figcaption>{title}</figcaption></figure>;
}

// Samples GET /v1/sandboxes/{id}/stats while shown; CPU is the rate between two samples.
export function StatsCharts({ id }) {
  const [samples, setSamples] = useState([]);
  const [error, setError] = useState(null);
  useEffect(() => {
    let stopped = false;
    const sample = () => api('GET', `${sandboxPath(id)}/stats`).then((s) => {
      if (stopped) return;
      setError(null);
      setSamples((old) => [...old, { ...s, t: Date.parse(s.at) / 1000 }].slice(-KEEP));
    }, (err) => { if (!stopped) setError(err); });
    sample();
    const timer = setInterval(sample, SAMPLE_MS);
    return () => { stopped = true; clearInterval(timer); };
  }, [id]);

  const times = [];
  const cpu = [];
  for (let i = 1; i < samples.length; i++) {
    const a = samples[i - 1];
    const b = samples[i];
    const seconds = b.t - a.t;
    if (seconds <= 0) continue;
    times.push(b.t);
    cpu.push(Math.max(0, ((b.cpuUsageUsec - a.cpuUsageUsec) / 1e6 / seconds) * 100));
  }
  const memory = samples.map((s) => s.memoryBytes / 1048576);
  const last = samples[samples.length - 1];
  return (
    <div>
      <ErrorNote error={error} />
      {last && (
        <p class="stats-now" role="status">
          CPU {cpu.length ? `${cpu[cpu.length - 1].toFixed(1)}%` : '…'} of {last.cpu} CPU
          {last.cpu === 1 ? '' : 's'} · memory {(last.memoryBytes / 1048576).toFixed(1)} MiB of {last.memoryMiB} MiB
        </p>
      )}
      <div class="charts">
        <Chart title="CPU (% of one CPU)" times={times} values={cpu} unit="%" />
        <Chart title="Memory (MiB)" times={samples.map((s) => s.t)} values={memory} unit="" />
      </div>
    </div>
  );
}
