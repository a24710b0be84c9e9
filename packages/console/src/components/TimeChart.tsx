import { useEffect, useMemo, useRef, useState } from "preact/hooks";
import uPlot from "uplot";

export interface ChartSeries {
  label: string;
  values: number[];
  /** Line colour; each series also has its own dash pattern so colour is never the only cue. */
  color: string;
  dash?: number[];
}

interface Props {
  /** Bucket starts, in seconds since the epoch (uPlot's time scale). */
  xs: number[];
  series: ChartSeries[];
  /** What the chart shows, for readers (the table beside it has the figures). */
  label: string;
  /**
   * aria-details, the chart's table alternative: the id of the table with the same figures or, when the
   * table sits in a closed <details>, of that <details> (a reference to content not rendered is dropped
   * from the accessibility tree).
   */
  detailsId: string;
  yLabel: string;
  /** The bucket's length in seconds: no axis tick finer than one bucket. */
  step: number;
  height?: number;
}

const TICK_STEPS = [
  3600,
  2 * 3600,
  3 * 3600,
  6 * 3600,
  12 * 3600,
  86400,
  2 * 86400,
  7 * 86400,
  14 * 86400,
  28 * 86400,
];

/** A uPlot line chart sized to its container. Styling is uPlot's sheet plus console.css (no inline CSS). */
export function TimeChart({ xs, series, label, detailsId, yLabel, step, height = 280 }: Props) {
  const box = useRef<HTMLDivElement>(null);
  const [width, setWidth] = useState(0);

  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const measure = () => setWidth(Math.max(280, Math.floor(el.clientWidth)));
    measure();
    const observer = new ResizeObserver(measure);
    observer.observe(el);
    return () => observer.disconnect();
  }, []);

  useEffect(() => {
    const el = box.current;
    if (!el || width === 0) return;
    const opts: uPlot.Options = {
      width,
      height,
      scales: { x: { time: true }, y: { range: (_u, _min, max) => [0, Math.max(1, Math.ceil(max * 1.1))] } },
      axes: [
        {
          stroke: "#4a5059",
          grid: { stroke: "#e6e8eb" },
          ticks: { stroke: "#d0d4d9" },
          incrs: TICK_STEPS.filter((s) => s >= step),
        },
        {
          label: yLabel,
          stroke: "#4a5059",
          grid: { stroke: "#e6e8eb" },
          ticks: { stroke: "#d0d4d9" },
          size: 56,
          values: (_u, splits) => splits.map((v) => (Number.isInteger(v) ? String(v) : "")),
        },
      ],
      series: [
        { label: "Time" },
        ...series.map((s) => ({
          label: s.label,
          stroke: s.color,
          width: 2,
          ...(s.dash ? { dash: s.dash } : {}),
          points: { show: xs.length <= 60, size: 5 },
        })),
      ],
      legend: { live: false },
      cursor: { drag: { x: false, y: false } },
    };
    const data: uPlot.AlignedData = [xs, ...series.map((s) => s.values)];
    const chart = new uPlot(opts, data, el);
    return () => chart.destroy();
  }, [xs, series, width, height, yLabel, step]);

  // data-series: the figures drawn on the canvas (the bucket starts and each line's values), so what
  // the picture shows can be read and checked against its table without looking at pixels.
  const plotted = useMemo(
    () => JSON.stringify({ x: xs, series: series.map((s) => ({ label: s.label, values: s.values })) }),
    [xs, series],
  );
  return (
    <div
      class="chart"
      ref={box}
      role="img"
      aria-label={label}
      aria-details={detailsId}
      data-series={plotted}
    />
  );
}
