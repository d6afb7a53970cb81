// Look-alike letters folded to their Latin twin before matching (Cyrillic, Greek, IPA, Latin variants).
// Fullwidth and mathematical alphanumerics are already folded by NFKC.

const PAIRS =
  // Cyrillic lower / upper
  "аa еe оo рp сc уy хx іi јj ѕs ԁd һh ӏl ԛq ԝw ґr ѵv ьb кk мm нh тt вb " +
  "АA ВB ЕE КK МM НH ОO РP СC ТT ХX УY ІI ЈJ ЅS ԌG Һh Ӏl " +
  // Greek lower / upper
  "αa οo ρp εe ιi κk νv τt υu χx ωw γy ηn μu " +
  "ΑA ΒB ΕE ΖZ ΗH ΙI ΚK ΜM ΝN ΟO ΡP ΤT ΥY ΧX " +
  // Latin look-alikes and IPA
  "ıi ȷj ɑa ɡg ɩi ɪi ʟl ɴn ʀr ѡw ꞵb ᴀa ᴄc ᴅd ᴇe ᴊj ᴋk ᴍm ᴏo ᴘp ᴛt ᴜu ᴠv ᴡw ᴢz";

/** Map from a look-alike code point to its lower-case Latin letter. */
export const CONFUSABLES: ReadonlyMap<number, string> = new Map(
  PAIRS.split(" ")
    .filter((p) => p.length > 0)
    .map((p) => {
      const cp = p.codePointAt(0)!;
      return [cp, p.slice(String.fromCodePoint(cp).length).toLowerCase()] as const;
    }),
);
