// ABA routing transit number checks: Federal Reserve prefix ranges and the 3-7-1 checksum.

/** True when the 9-digit string has a valid ABA prefix and checksum. */
export function abaValid(digits: string): boolean {
  if (digits.length !== 9) return false;
  const d: number[] = [];
  for (let i = 0; i < 9; i++) {
    const c = digits.charCodeAt(i) - 48;
    if (c < 0 || c > 9) return false;
    d.push(c);
  }
  const prefix = d[0]! * 10 + d[1]!;
  const prefixOk = prefix <= 12 || (prefix >= 21 && prefix <= 32) || (prefix >= 61 && prefix <= 72) || prefix === 80;
  if (!prefixOk) return false;
  if (digits === "000000000") return false;
  const sum = 3 * (d[0]! + d[3]! + d[6]!) + 7 * (d[1]! + d[4]! + d[7]!) + (d[2]! + d[5]! + d[8]!);
  return sum % 10 === 0;
}

/** The check digit completing an 8-digit ABA payload. */
export function abaCheckDigit(payload8: string): string {
  for (let c = 0; c <= 9; c++) {
    const d = payload8 + c;
    const n = (i: number): number => d.charCodeAt(i) - 48;
    const sum = 3 * (n(0) + n(3) + n(6)) + 7 * (n(1) + n(4) + n(7)) + (n(2) + n(5) + n(8));
    if (sum % 10 === 0) return String(c);
  }
  throw new Error("unreachable: some digit always completes an ABA payload");
}
