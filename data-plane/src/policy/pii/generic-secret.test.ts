// Secrets without a prefix (Mistral, Cohere, in-house keys) are found where only a secret goes: after
// "Bearer " or as the value of a secret-named identifier; placeholders, words and cursors are not.

import test from "ava";
import { detectPii } from "./detect-pii.js";
import { createRng } from "./fixtures/prng.js";

const B62 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
const rng = createRng(171717);
const body = (n: number, alphabet = B62) => Array.from({ length: n }, () => alphabet[rng.int(0, alphabet.length - 1)]).join("");

function keys(text: string): string[] {
  return detectPii(text)
    .filter((f) => f.entityType === "api_key")
    .map((f) => text.slice(f.start, f.end));
}

const MISTRAL = "1gRa9D9j1yzm7gs8yyKllbQAfKinXXR0";
const COHERE = "OR5k8og7zUftTJH5UpdGYh7K3HP24bqb2DztRTqD";

for (const [form, text, value] of [
  ["Bearer header", `curl -H "Authorization: Bearer ${MISTRAL}" https://api.mistral.ai/v1/models`, MISTRAL],
  ["lower-case bearer after a header", `authorization: bearer ${COHERE}`, COHERE],
  ["Basic header", "Authorization: Basic dXNlcjpwYXNzd29yZA==", "dXNlcjpwYXNzd29yZA=="],
  ["Token header", `Authorization: Token ${COHERE}`, COHERE],
  ["env MISTRAL_API_KEY", `MISTRAL_API_KEY=${MISTRAL}\nDEBUG=1`, MISTRAL],
  ["env CO_API_KEY quoted", `export CO_API_KEY="${COHERE}"`, COHERE],
  ["env MY_KEY", `MY_KEY=${MISTRAL}`, MISTRAL],
  ["export TOKEN", `export TOKEN='${MISTRAL}'`, MISTRAL],
  ["JSON api_key", `{"api_key": "${COHERE}"}`, COHERE],
  ["JSON apiKey", `{"model": "mistral-large", "apiKey": "${MISTRAL}"}`, MISTRAL],
  ["escaped JSON", `"{\\"api_key\\": \\"${MISTRAL}\\"}"`, MISTRAL],
  ["x-api-key header", `x-api-key: ${COHERE}`, COHERE],
  ["YAML client_secret", `oauth:\n  client_secret: ${COHERE}\n`, COHERE],
  ["Python kwarg", `client = Mistral(api_key="${MISTRAL}")`, MISTRAL],
  ["Go :=", `accessToken := "${MISTRAL}"`, MISTRAL],
  ["PHP =>", `'auth_token' => '${MISTRAL}',`, MISTRAL],
  ["password", `DB_PASSWORD=${body(24)}9`, null],
  ["hex secret", `webhook_secret = "0afae57f3ccfd9d7f5767067bc48b30f"`, "0afae57f3ccfd9d7f5767067bc48b30f"],
  ["query string", `GET /v1/data?api_key=${COHERE}&page=2`, COHERE],
  ["end of a sentence", `The key is api_key=${MISTRAL}.`, MISTRAL],
] as const) {
  test(`generic secret found: ${form}`, (t) => {
    const v = value ?? text.slice(text.indexOf("=") + 1);
    t.deepEqual(keys(text), [v], text);
  });
}

for (const [form, text] of [
  ["placeholder", `api_key=your-api-key-here`],
  ["angle placeholder", `"apiKey": "<API_KEY>"`],
  ["x placeholder", `MISTRAL_API_KEY=xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx`],
  ["env reference", `apiKey: process.env.MISTRAL_API_KEY_PROD`],
  ["template", `api_key: \${{ secrets.MISTRAL_API_KEY }}`],
  ["pagination cursor", `{"next_page_token": "CiAKGjBpNDd2Nmp2Zml2cXRpYjE2ZjM2ZHd1"}`],
  ["not a secret name", `{"trace_id": "4bf92f3577b34da6a3ce929d0e0e4736", "key_id": "k8s7Gh2Lq9Zx4Vb6Nm1Pw3Rt"}`],
  ["token count", `token_count: 12345678901234567890abc`],
  ["low entropy", `api_key=aaaa1111aaaa1111aaaa1111`],
  ["too long", `api_key=${body(129)}`],
  ["prose after a colon", `Note: the key takeaway is that the token budget was exceeded.`],
  ["Bearer in prose", `The Bearer of the award thanked everyone involved in the project.`],
] as const) {
  test(`generic secret not reported: ${form}`, (t) => {
    t.deepEqual(keys(text), [], text);
  });
}

test("a prefixed key after a secret name is reported once, as the prefixed key", (t) => {
  const k = "sk-proj-" + body(40) + "7a";
  const text = `OPENAI_API_KEY=${k}`;
  const f = detectPii(text).filter((x) => x.entityType === "api_key");
  t.is(f.length, 1);
  t.is(text.slice(f[0]!.start, f[0]!.end), k);
  t.true(f[0]!.score > 0.7);
});

for (const [form, text, value] of [
  ["prose: is", `My Mistral key is ${MISTRAL} if you need it`, MISTRAL],
  ["prose: words between, was, quoted", `The access token for staging was '${COHERE}'.`, COHERE],
  ["prose: colon, full stop", `Here is the API key: ${MISTRAL}.`, MISTRAL],
  ["prose: secret", `Our webhook secret is 0afae57f3ccfd9d7f5767067bc48b30f now`, "0afae57f3ccfd9d7f5767067bc48b30f"],
] as const) {
  test(`secret named in prose found: ${form}`, (t) => {
    t.deepEqual(keys(text), [value], text);
  });
}

for (const [form, text] of [
  ["the key is that", "The key is that the token budget was exceeded yesterday."],
  ["token was rejected", "The token was rejected by the server with error 401."],
  ["a word of a name", "The monkey is 12345678901234567890abcdEFGH years old."],
  ["another identifier", "key_id is k8s7Gh2Lq9Zx4Vb6Nm1Pw3Rt in the log"],
  ["low entropy", "the key is aaaa1111aaaa1111aaaa1111 here"],
] as const) {
  test(`secret named in prose not reported: ${form}`, (t) => {
    t.deepEqual(keys(text), [], text);
  });
}
