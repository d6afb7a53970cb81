// Unit tests of the validators behind the recognizers: Luhn, IBAN mod-97, ABA, SSN ranges, IPv6 syntax.

import test from "ava";
import { abaCheckDigit, abaValid } from "./aba.js";
import { ibanCheckDigits, ibanValid } from "./iban-check.js";
import { ipv6Valid } from "./ipv6-check.js";
import { luhnCheckDigit, luhnValid } from "./luhn.js";
import { ssnPlausible } from "./ssn-check.js";

test("luhn accepts network test numbers and rejects one-digit changes", (t) => {
  for (const n of ["4111111111111111", "5500000000000004", "378282246310005", "6011111111111117", "4242424242424242"]) {
    t.true(luhnValid(n), n);
    const changed = n.slice(0, -1) + String((Number(n.at(-1)) + 1) % 10);
    t.false(luhnValid(changed), changed);
  }
  t.false(luhnValid(""));
  t.false(luhnValid("4111-1111"));
  t.is(luhnCheckDigit("411111111111111"), "1");
});

test("iban mod-97 and per-country length", (t) => {
  t.true(ibanValid("DE89370400440532013000"));
  t.true(ibanValid("GB82WEST12345698765432"));
  t.true(ibanValid("NO9386011117947"));
  t.false(ibanValid("DE89370400440532013001"), "check digits");
  t.false(ibanValid("DE8937040044053201300"), "too short for DE");
  t.false(ibanValid("XX89370400440532013000"), "unknown country");
  t.is(ibanCheckDigits("DE", "370400440532013000"), "89");
});

test("aba routing checksum and prefix ranges", (t) => {
  for (const n of ["021000021", "011000015", "026009593", "121000358", "322271627"]) t.true(abaValid(n), n);
  t.false(abaValid("021000022"));
  t.false(abaValid("501000019"), "prefix 50 is not a Federal Reserve range");
  t.false(abaValid("12345678"));
  t.is(abaCheckDigit("02100002"), "1");
});

test("ssn invalid ranges", (t) => {
  t.true(ssnPlausible("512", "44", "7890"));
  t.false(ssnPlausible("000", "44", "7890"));
  t.false(ssnPlausible("666", "44", "7890"));
  t.false(ssnPlausible("912", "44", "7890"));
  t.false(ssnPlausible("512", "00", "7890"));
  t.false(ssnPlausible("512", "44", "0000"));
  t.false(ssnPlausible("123", "45", "6789"));
  t.false(ssnPlausible("078", "05", "1120"));
  t.false(ssnPlausible("111", "11", "1111"));
});

test("ipv6 syntax", (t) => {
  for (const a of ["2001:db8::1", "::1", "fe80::1ff:fe23:4567:890a", "2001:0db8:85a3:0000:0000:8a2e:0370:7334", "::ffff:192.0.2.128", "1::"]) t.true(ipv6Valid(a), a);
  for (const a of ["12:30:45", "1:2:3:4:5:6:7", "2001:db8::1::2", "00:1A:2B:3C:4D:5E", "::ffff:999.0.2.128", "g::1", "1:2:3:4:5:6:7:8:9"]) t.false(ipv6Valid(a), a);
});
