// The run at the end of a stream's text that may still grow into a value: a quote's forced release stops before it.
import test from "ava";
import { growingTailStart } from "./growing-tail.js";

const held = (text: string, floor = 0) => text.slice(growingTailStart(text, floor));

test("the start of an address, a key, a URL or a number group at the end is held; prose that ended is not", (t) => {
  t.is(held("writing to jo.smith@exa"), "jo.smith@exa");
  t.is(held("the key is sk-proj-Ab3"), "sk-proj-Ab3");
  t.is(held("see https://example.org/find?u=jo"), "https://example.org/find?u=jo");
  t.is(held("the SSN is 536 22 87"), "is 536 22 87", "a word before a number group is held with it (harmless)");
  t.is(held("the SSN is 536 22 "), "is 536 22 ", "a separator after a digit: the next group may follow");
  t.is(held("call +1 (555) 123-45"), "+1 (555) 123-45");
  t.is(held("card 4111 1111 1111 11"), "card 4111 1111 1111 11");
  t.is(held("IBAN DE89 3704 0044"), "DE89 3704 0044");
  t.is(held("lists GB82 WEST 12"), "GB82 WEST 12", "letter groups of an IBAN");
  t.is(held("account GB82 WEST "), "GB82 WEST ");
  t.is(held("born on March 3,"), "March 3,");
  t.is(held("born on March 3, "), "March 3, ");
  t.is(held("date of birth: 3 March"), "3 March");
  t.is(held("phone: (415"), "(415");
  t.is(held("phone: (415) "), "(415) ");
  t.is(held("Zürich Büro"), "Büro");
  t.is(held("during office hours. "), "", "a sentence that ended");
  t.is(held("([example.com](https://example.com/?utm_source=openai))"), "", "a closed link");
  t.is(held("([example.com](https://example.com/?utm_source=openai))."), ".");
  t.is(held(""), "");
});

test("a date with a month name that has not reached its year is held from its first part", (t) => {
  t.is(held("date of birth: 3 March "), "3 March ");
  t.is(held("date of birth: 3 March, "), "3 March, ");
  t.is(held("DOB: 14th of "), "14th of ");
  t.is(held("DOB: 14th of Sept. "), "14th of Sept. ");
  t.is(held("DOB 14th of "), "DOB 14th of ", "a word before a number is held with it (harmless)");
  t.is(held("born on March "), "March ");
  t.is(held("born on Sept. "), "Sept. ");
  t.is(held("born on March 14th, "), "March 14th, ");
  t.is(held("born on march 3 "), "march 3 ");
  t.is(held("she was born in 1990. "), "", "a sentence that ended");
  t.is(held("the summary of "), "", "a word and 'of' without a day");
  t.is(held("DOB: 14th of Sept. ", 13), "Sept. ", "never below the floor");
});

test("never below the floor (what was released already)", (t) => {
  t.is(growingTailStart("jo.smith@exa", 5), 5);
  t.is(growingTailStart("abc def", 7), 7);
});
