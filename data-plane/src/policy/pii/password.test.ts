// Passwords shorter than a generated secret are found where only a password goes: as the value of a
// password-named identifier, or in prose right after "password … is/was/:". Prose about passwords,
// placeholders, paths and URLs are not passwords.

import test from "ava";
import { detectPii } from "./detect-pii.js";

function keys(text: string): string[] {
  return detectPii(text)
    .filter((f) => f.entityType === "api_key")
    .map((f) => text.slice(f.start, f.end));
}

for (const [form, text, value] of [
  ["prose: is", "my password is hunter2 so please log in for me", "hunter2"],
  ["prose: words between, full stop", "The password for the staging database is Tr0ub4dor&3.", "Tr0ub4dor&3"],
  ["prose: was, quoted", 'Her old passcode was "4821abcd" until March', "4821abcd"],
  ["prose: colon", "Wi-Fi password: Secret!x", "Secret!x"],
  ["prose: capitalised", "Password is P@ssw0rd", "P@ssw0rd"],
  ["env", "PGPASSWORD=S3cr3tP4ss psql -h db", "S3cr3tP4ss"],
  ["env with underscores", "DB_PASSWORD=hunter22\nDEBUG=1", "hunter22"],
  ["JSON", '{"user": "ann", "password": "Zebra#2024"}', "Zebra#2024"],
  ["escaped JSON", '"{\\"password\\": \\"Zebra#2024\\"}"', "Zebra#2024"],
  ["camelCase key", "const dbPassword = 'kiwi77pear';", "kiwi77pear"],
  ["YAML pwd", "mysql:\n  pwd: m0nkey!\n", "m0nkey!"],
  ["passphrase", "ssh passphrase: correct-horse-battery-staple-2024", "correct-horse-battery-staple-2024"],
  ["URL query", "GET /login?user=ann&password=abc12345 HTTP/1.1", "abc12345"],
] as const) {
  test(`password found: ${form}`, (t) => {
    t.deepEqual(keys(text), [value], text);
  });
}

for (const [form, text] of [
  ["prose: required", "The password is required and the password is case-sensitive."],
  ["prose: length", "Your password is 8 characters long at least."],
  ["prose: reset link", "The password reset link is https://example.com/reset/abc123 and expires soon."],
  ["prose: no verb", "Password managers like 1Password store credentials."],
  ["prose: changed", "The password was changed on Monday by the admin."],
  ["prose: sentence ends before", "Choose a password. Version 2 is out."],
  ["placeholder angle", "password=<your-password-1>"],
  ["placeholder env", "DB_PASSWORD=${DB_PASSWORD_2}"],
  ["placeholder template", "password: {{ secrets.db_password_1 }}"],
  ["masked", "password: ********"],
  ["repeated", "password=x1x1x1x1"],
  ["path", "PWD=/home/user1"],
  ["a word", "password: changeme"],
  ["another identifier", "password_hash: 5f4dcc3b5aa765d61d8327deb882cf99"],
  ["inside a word", "bypassword is2fast"],
  ["too short", "password: ab1"],
] as const) {
  test(`password not reported: ${form}`, (t) => {
    t.deepEqual(keys(text), [], text);
  });
}
