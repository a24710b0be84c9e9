import type { CalibrationBin } from "../types.js";

interface Props {
  bins: CalibrationBin[];
  /** The axes' upper end (both axes), in (0, 1]. */
  max: number;
  titleId: string;
  descId: string;
  /** The id of the table with every bin's figures (aria-details: the diagram's table alternative). */
  tableId: string;
}

const SIZE = 440;
const PAD = { left: 58, right: 16, top: 16, bottom: 50 };
const PLOT = SIZE - PAD.left - PAD.right;
const PLOT_H = SIZE - PAD.top - PAD.bottom;

/** A calm upper end for the axes: the smallest of these at or above `value`. */
export function niceMax(value: number): number {
  const steps = [0.01, 0.02, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.8, 1];
  return steps.find((s) => s >= value - 1e-12) ?? 1;
}

function ticks(max: number): number[] {
  const step = max / 5;
  return Array.from({ length: 6 }, (_, i) => Math.round(i * step * 1e6) / 1e6);
}

/**
 * A reliability diagram in SVG: for each bin with labelled events, the mean estimated risk (x)
 * against the observed abuse rate (y), the Wilson 95% interval as an error bar and the marker's
 * area growing with the labelled events; a perfectly calibrated estimate lies on the diagonal.
 */
export function ReliabilityDiagram({ bins, max, titleId, descId, tableId }: Props) {
  const x = (v: number) => PAD.left + (Math.min(v, max) / max) * PLOT;
  const y = (v: number) => PAD.top + PLOT_H - (Math.min(v, max) / max) * PLOT_H;
  const most = Math.max(1, ...bins.map((b) => b.labelled));
  const points = bins.filter((b) => b.observedRate !== null && b.labelled > 0);
  const fmt = (v: number) => (max <= 0.1 ? `${Math.round(v * 1000) / 10}%` : `${Math.round(v * 100)}%`);
  return (
    <svg
      class="reliability"
      viewBox={`0 0 ${SIZE} ${SIZE}`}
      role="img"
      aria-labelledby={titleId}
      aria-describedby={descId}
      aria-details={tableId}
      data-testid="reliability-diagram"
    >
      <title>Reliability diagram: observed abuse rate against mean estimated risk</title>
      <rect x={PAD.left} y={PAD.top} width={PLOT} height={PLOT_H} class="plot-bg" />
      {ticks(max).map((t) => (
        <g key={`t${t}`} class="tick">
          <line x1={x(t)} x2={x(t)} y1={PAD.top} y2={PAD.top + PLOT_H} class="grid" />
          <line x1={PAD.left} x2={PAD.left + PLOT} y1={y(t)} y2={y(t)} class="grid" />
          <text x={x(t)} y={PAD.top + PLOT_H + 18} text-anchor="middle">
            {fmt(t)}
          </text>
          <text x={PAD.left - 8} y={y(t) + 4} text-anchor="end">
            {fmt(t)}
          </text>
        </g>
      ))}
      <line x1={x(0)} y1={y(0)} x2={x(max)} y2={y(max)} class="diagonal" />
      <text x={PAD.left + PLOT / 2} y={SIZE - 8} text-anchor="middle" class="axis-label">
        Mean estimated risk
      </text>
      <text
        x={14}
        y={PAD.top + PLOT_H / 2}
        text-anchor="middle"
        class="axis-label"
        transform={`rotate(-90 14 ${PAD.top + PLOT_H / 2})`}
      >
        Observed abuse rate
      </text>
      {points.map((b) => {
        const mx = x(b.meanRisk ?? (b.low + b.high) / 2);
        const my = y(b.observedRate ?? 0);
        const r = 3 + 6 * Math.sqrt(b.labelled / most);
        return (
          <g key={`b${b.low}`} class="bin">
            {b.interval ? (
              <>
                <line x1={mx} x2={mx} y1={y(b.interval.low)} y2={y(b.interval.high)} class="err" />
                <line x1={mx - 5} x2={mx + 5} y1={y(b.interval.low)} y2={y(b.interval.low)} class="err" />
                <line x1={mx - 5} x2={mx + 5} y1={y(b.interval.high)} y2={y(b.interval.high)} class="err" />
              </>
            ) : null}
            <circle cx={mx} cy={my} r={r} class="point" />
          </g>
        );
      })}
      <rect x={PAD.left} y={PAD.top} width={PLOT} height={PLOT_H} class="frame" />
    </svg>
  );
}
