// Tests for each quality scorer and the combined qualityScores output.

import test from "ava";
import { completionFinished } from "./completion-finished.js";
import { asksForJson, jsonValidityScore } from "./format-validity.js";
import { nonRepetitionScore } from "./non-repetition.js";
import { qualityScores } from "./quality-scores.js";
import { refusalScore } from "./refusal.js";
import { relevanceScore } from "./relevance.js";

test("completion_finished maps every provider's finish reason", (t) => {
  const ok = (finishReason: string | undefined, completion = "Hi there."): number => completionFinished({ completion, finishReason, status: "success" });
  for (const r of ["stop", "end_turn", "STOP", "stop_sequence", "COMPLETE", "tool_calls", "tool_use"]) t.is(ok(r), 1, r);
  for (const r of ["length", "max_tokens", "MAX_TOKENS", "model_length", "model_context_window_exceeded", "pause_turn", "CONTINUATION", "TIMEOUT"]) t.is(ok(r), 0.25, r);
  for (const r of ["content_filter", "SAFETY", "RECITATION", "IMAGE_PROHIBITED_CONTENT", "IMAGE_RECITATION", "refusal", "error", "ERROR"]) t.is(ok(r), 0, r);
  for (const r of ["MALFORMED_FUNCTION_CALL", "UNEXPECTED_TOOL_CALL", "TOO_MANY_TOOL_CALLS", "NO_IMAGE", "IMAGE_OTHER", "OTHER"]) t.is(ok(r), 0, r);
  t.is(ok("something_new"), 0.5);
  t.is(ok(undefined), 1);
  t.is(ok(undefined, "   "), 0);
  t.is(completionFinished({ completion: "x", finishReason: "stop", status: "error" }), 0);
  t.is(completionFinished({ completion: "", status: "blocked" }), 0);
});

test("refusal: 1 without refusal, 0 for a refusal, partial scores for mixed answers", (t) => {
  t.is(refusalScore("The capital of France is Paris."), 1);
  t.is(refusalScore("I'm sorry, but I can't help with that request."), 0);
  t.is(refusalScore("I cannot provide instructions for making weapons."), 0);
  t.is(refusalScore("As an AI language model, I cannot browse the internet."), 0);
  t.is(refusalScore("I must decline to answer that."), 0);
  t.is(refusalScore("Es tut mir leid, aber ich kann dabei nicht helfen."), 0);
  t.is(refusalScore("Je suis désolé, mais je ne peux pas répondre à cette question."), 0);
  t.is(refusalScore("Lo siento, pero no puedo ayudar con eso."), 0);
  t.is(refusalScore("Mi dispiace, ma non posso aiutarti con questo."), 0);
  t.is(refusalScore("Desculpe, mas não posso ajudar com isso."), 0);
  t.is(refusalScore("Het spijt me, maar ik kan daar niet mee helpen."), 0);
  t.is(refusalScore(`I can't share the exact internal figures. ${"Here is a general overview of the market instead. ".repeat(12)}`), 0.5);
  t.is(refusalScore(`${"Here is the plan for the migration with all steps. ".repeat(6)}I can't help with the legal part, ask counsel.`), 0.75);
  t.is(refusalScore("I can help with that! Here are the steps."), 1);
});

test("relevance: shared content words, saturating, language-agnostic tokens", (t) => {
  const prompt = "How do I rotate the TLS certificates on our nginx load balancer?";
  t.is(relevanceScore(prompt, "To rotate the TLS certificates on an nginx load balancer, replace the certificate files and reload nginx."), 1);
  t.true(relevanceScore(prompt, "Bananas are rich in potassium and taste sweet.") < 0.2);
  const partial = relevanceScore(prompt, "Certificates expire; plan ahead.");
  t.true(partial > 0 && partial < 1, String(partial));
  t.is(relevanceScore(prompt, ""), 0);
  t.is(relevanceScore("Hi!", "Hello, how can I help?"), 1);
  t.true(relevanceScore("Wie hoch ist der Eiffelturm?", "Der Eiffelturm ist 330 Meter hoch.") >= 0.99);
  t.true(relevanceScore("deploying services", "we deployed the service") >= 0.99, "stemming joins deploy forms");
});

test("non_repetition: distinct trigram ratio", (t) => {
  t.is(nonRepetitionScore("The quick brown fox jumps over the lazy dog."), 1);
  t.true(nonRepetitionScore("the the the the the the the the the the") < 0.2);
  const para = "We should ship the release on Friday after the tests pass. ";
  t.true(Math.abs(nonRepetitionScore(para.repeat(4)) - 0.27) < 0.05, String(nonRepetitionScore(para.repeat(4))));
  t.is(nonRepetitionScore("ok"), 1);
});

test("format_validity: JSON requested and returned", (t) => {
  t.true(asksForJson("Return the result as JSON with keys name and age."));
  t.false(asksForJson("Write a poem about autumn."));
  t.is(jsonValidityScore('{"name": "Ada", "age": 36}'), 1);
  t.is(jsonValidityScore('```json\n{"name": "Ada"}\n```'), 1);
  t.is(jsonValidityScore('[1, 2, 3]'), 1);
  t.is(jsonValidityScore('Sure! Here it is: {"name": "Ada"} Let me know.'), 0.5);
  t.is(jsonValidityScore("name: Ada, age: 36"), 0);
  t.is(jsonValidityScore('{"name": "Ada",}'), 0);
  t.is(jsonValidityScore('"just a string"'), 0);
});

test("qualityScores: all scorers in [0,1]; format_validity only when JSON is asked for", (t) => {
  const good = qualityScores({ prompt: "List three primary colours as JSON array.", completion: '["red", "blue", "yellow"]', finishReason: "stop", status: "success" });
  t.deepEqual(good.map((s) => s.scorer), ["completion_finished", "non_empty", "refusal", "relevance", "non_repetition", "format_validity"]);
  for (const s of good) t.true(s.score >= 0 && s.score <= 1, s.scorer);
  t.is(good.find((s) => s.scorer === "format_validity")!.score, 1);
  const prose = qualityScores({ prompt: "Tell me a joke.", completion: "Why did the chicken cross the road?", finishReason: "length", status: "success" });
  t.false(prose.some((s) => s.scorer === "format_validity"));
  t.is(prose.find((s) => s.scorer === "completion_finished")!.score, 0.25);
});

test("qualityScores: failed and blocked requests only report completion_finished = 0", (t) => {
  t.deepEqual(qualityScores({ prompt: "x", completion: "", status: "error" }), [{ scorer: "completion_finished", score: 0 }]);
  t.deepEqual(qualityScores({ prompt: "x", completion: "", status: "blocked" }), [{ scorer: "completion_finished", score: 0 }]);
});

test("a tool-only answer (tool calls, no text) is non-empty, and its relevance is neutral (1)", (t) => {
  const prompt = "What is the weather in Paris tomorrow? Use the forecast tool.";
  const scores = (completion: string, toolCalls?: { name: string }[]) =>
    Object.fromEntries(qualityScores({ prompt, completion, finishReason: "tool_calls", status: "success", toolCalls }).map((s) => [s.scorer, s.score]));
  const toolOnly = scores("", [{ name: "lookup_customer" }]);
  t.is(toolOnly.completion_finished, 1);
  t.is(toolOnly.non_empty, 1);
  t.is(toolOnly.relevance, 1);
  t.is(scores("  \n", [{ name: "get_forecast" }]).non_empty, 1); // whitespace only is no text
  // no tool calls: an empty answer stays empty and irrelevant
  t.is(scores("").non_empty, 0);
  t.is(scores("").relevance, 0);
  t.is(scores("", []).non_empty, 0);
  // text beside tool calls is judged as text
  const withText = scores("Bananas are yellow.", [{ name: "get_forecast" }]);
  t.is(withText.non_empty, 1);
  t.is(withText.relevance, 0);
});
