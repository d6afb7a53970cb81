// Quality scores do not delay the response (DESIGN.md §8): with the response gate on, the answer's last
// bytes leave once the trace is spooled, and the scores are computed after that and added to the trace.
import test from "ava";
import type { ServerResponse } from "node:http";
import { ResponseGate } from "../trace/response-gate.js";
import { callProxy, governanceState, openAiUpstream, startInProcessProxy } from "./testing/in-process-proxy.js";

const AGENT = "agt_quality_after";
const KEY = "ak_quality_after_0123456789";

for (const stream of [false, true]) {
  test(`${stream ? "SSE" : "JSON"}: the gate releases the answer when its trace is spooled; the quality scores come after, on the same trace`, async (t) => {
    const gate = new ResponseGate(60_000);
    const seen: { ended: boolean; at: "emit" | "amend" }[] = [];
    let answered: ServerResponse | undefined;
    const s = await startInProcessProxy(
      governanceState({ tenant: "ten_quality_after", agent: AGENT, key: KEY }),
      openAiUpstream,
      (deps) => {
        const emit = deps.emit.bind(deps);
        const amend = deps.amend.bind(deps);
        deps.emit = (tr, res) => {
          answered = res;
          seen.push({ ended: res.writableEnded, at: "emit" });
          emit(tr, res);
        };
        deps.amend = (id, fields) => {
          seen.push({ ended: answered?.writableEnded === true, at: "amend" });
          amend(id, fields);
        };
      },
      gate,
    );
    try {
      const r = await callProxy(s.url, { key: KEY, agent: AGENT }, stream);
      t.is(r.status, 200);
      t.false(r.cut);
      t.deepEqual(seen, [
        { ended: false, at: "emit" }, // held by the gate until its trace is spooled
        { ended: true, at: "amend" }, // the answer had left when the scores were computed
      ]);
      t.like(gate.stats(), { gated: 1, timedOut: 0 });
      const [tr] = s.traces;
      t.deepEqual(tr!.qualityScores.map((q) => q.scorer).sort(), ["completion_finished", "non_empty", "non_repetition", "refusal", "relevance"]);
      t.is(tr!.spans.at(-1)!.stage, "quality_score");
    } finally {
      await s.close();
    }
  });
}
