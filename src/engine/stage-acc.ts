/**
 * The figures of each stage of a staged run, merged exactly from the interval snapshots of the intervals
 * that belong to it (stage lengths are whole multiples of the report interval).
 */
import { addSnapshot, mergingHistogram } from '../metrics/histogram.ts';
import type { StageAccumulator, StagePlan } from '../metrics/outcome.ts';
import type { CounterSnapshot } from './protocol.ts';
import { stageAt } from './stages.ts';

export class StageFigures {
  readonly stages: StageAccumulator[];
  private readonly plans: readonly StagePlan[];

  constructor(plans: readonly StagePlan[]) {
    this.plans = plans;
    let t = 0;
    this.stages = plans.map((plan, index) => {
      const s: StageAccumulator = {
        plan,
        index,
        startS: t,
        endS: t + plan.durationS,
        measuredS: 0,
        queries: 0,
        events: 0,
        errors: 0,
        eventHist: mergingHistogram(),
        types: new Map(),
        closed: false,
      };
      t += plan.durationS;
      return s;
    });
  }

  /** The stage (from 0) of the interval that starts at `startS`. */
  stageOf(startS: number): number {
    return stageAt(this.plans, startS + 1e-9);
  }

  /** Add one complete interval's snapshots (of every worker), `durS` long, starting at `startS`. */
  add(startS: number, durS: number, snaps: readonly CounterSnapshot[]): number {
    const i = this.stageOf(startS);
    const st = this.stages[i] as StageAccumulator;
    st.measuredS += durS;
    for (const s of snaps) {
      for (const t of s.types) {
        let acc = st.types.get(t.name);
        if (acc === undefined) {
          acc = { kind: t.kind, count: 0, errors: 0, hist: mergingHistogram() };
          st.types.set(t.name, acc);
        }
        acc.count += t.count;
        acc.errors += t.errors;
        st.queries += t.count;
        if (t.hist) addSnapshot(acc.hist, t.hist);
      }
      st.events += s.events;
      for (const e of s.errors) st.errors += e.count;
      if (s.eventHist) addSnapshot(st.eventHist, s.eventHist);
    }
    // every stage before this one is complete now, and this one when the interval reaches its end
    for (let k = 0; k < i; k++) (this.stages[k] as StageAccumulator).closed = true;
    if (startS + durS >= st.endS - 1e-6) st.closed = true;
    return i;
  }

  closeAll(): void {
    for (const s of this.stages) s.closed = true;
  }
}
