// Counters and histograms for the proxy's hot path. prom-client's own Counter and Histogram take a
// labels object on every update and validate, sort and hash it (several µs per proxied request over
// the ~10 updates a request makes); these keep one child per label-value combination, found by the
// values themselves, so an update is a Map lookup and a few additions. They implement prom-client's
// metric interface (name, help, type, get()) and register in the same Registry, so GET /metrics is
// rendered by prom-client exactly as before (`le` first, then the labels in declared order; +Inf, _sum, _count).
// Written by hand because no maintained library offers allocation-free labelled updates.
import type { MetricValue, Registry } from "prom-client";

interface Config<L extends string> {
  name: string;
  help: string;
  /** Up to three label names; update with the values in this order. */
  labelNames: readonly L[];
  registers: Registry[];
}

interface Entry<L extends string, C> {
  labels: Record<L, string>;
  child: C;
}

abstract class Labeled<L extends string, C> {
  /** Children by first, second and third label value: found without building a key string. */
  private readonly tree = new Map<string, Map<string, Map<string, Entry<L, C>>>>();
  /** The same children in creation order (rendering). */
  protected readonly entries: Entry<L, C>[] = [];
  readonly name: string;
  readonly help: string;
  protected readonly labelNames: readonly L[];

  constructor(cfg: Config<L>) {
    if (cfg.labelNames.length > 3) throw new Error(`${cfg.name}: at most three labels`);
    this.name = cfg.name;
    this.help = cfg.help;
    this.labelNames = cfg.labelNames;
    for (const r of cfg.registers) r.registerMetric(this as never);
  }

  protected abstract newChild(): C;

  /** The child for these label values (in labelNames order; missing ones are ""). */
  protected childFor(a: string, b: string, c: string): C {
    let byB = this.tree.get(a);
    if (!byB) this.tree.set(a, (byB = new Map()));
    let byC = byB.get(b);
    if (!byC) byB.set(b, (byC = new Map()));
    let entry = byC.get(c);
    if (!entry) {
      const values = [a, b, c];
      const labels = {} as Record<L, string>;
      this.labelNames.forEach((n, i) => (labels[n] = values[i]!));
      entry = { labels, child: this.newChild() };
      byC.set(c, entry);
      this.entries.push(entry);
    }
    return entry.child;
  }
}

export class LabeledCounter<L extends string> extends Labeled<L, { value: number }> {
  readonly type = "counter";
  protected newChild() {
    return { value: 0 };
  }

  inc(a: string, b = "", c = "", by = 1): void {
    this.childFor(a, b, c).value += by;
  }

  get() {
    const values: MetricValue<L>[] = [];
    for (const { labels, child } of this.entries) values.push({ labels: { ...labels }, value: child.value });
    return { name: this.name, help: this.help, type: "counter" as const, values, aggregator: "sum" as const };
  }
}

interface HistogramChild {
  /** Observations per bucket (not cumulative); the last slot is above the highest bound. */
  counts: Float64Array;
  sum: number;
  count: number;
}

export class LabeledHistogram<L extends string> extends Labeled<L, HistogramChild> {
  readonly type = "histogram";
  private readonly buckets: readonly number[];

  constructor(cfg: Config<L> & { buckets: readonly number[] }) {
    super(cfg);
    this.buckets = [...cfg.buckets].sort((x, y) => x - y);
  }

  protected newChild(): HistogramChild {
    return { counts: new Float64Array(this.buckets.length + 1), sum: 0, count: 0 };
  }

  observe(value: number, a: string, b = "", c = ""): void {
    if (!Number.isFinite(value)) return;
    const child = this.childFor(a, b, c);
    const bounds = this.buckets;
    let i = 0;
    while (i < bounds.length && value > bounds[i]!) i++;
    child.counts[i]!++;
    child.sum += value;
    child.count++;
  }

  get() {
    const values: MetricValue<L | "le">[] = [];
    for (const { labels, child } of this.entries) {
      let cumulative = 0;
      this.buckets.forEach((le, i) => {
        cumulative += child.counts[i]!;
        values.push({ labels: { le, ...labels }, value: cumulative, metricName: `${this.name}_bucket` } as MetricValue<L | "le">);
      });
      values.push({ labels: { le: "+Inf", ...labels }, value: child.count, metricName: `${this.name}_bucket` } as MetricValue<L | "le">);
      values.push({ labels: { ...labels }, value: child.sum, metricName: `${this.name}_sum` } as MetricValue<L | "le">);
      values.push({ labels: { ...labels }, value: child.count, metricName: `${this.name}_count` } as MetricValue<L | "le">);
    }
    return { name: this.name, help: this.help, type: "histogram" as const, values, aggregator: "sum" as const };
  }
}
