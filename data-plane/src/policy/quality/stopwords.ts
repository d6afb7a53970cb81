// Function words ignored by the relevance scorer (English plus the most frequent German, French,
// Spanish, Italian, Portuguese and Dutch ones), and a light English suffix stemmer.

const LIST =
  // English
  "a an the and or but if then else of to in on at by for with about as into from up down over under " +
  "is are was were be been being am do does did doing have has had having can could will would shall should " +
  "may might must i me my mine we us our you your yours he him his she her it its they them their this that " +
  "these those there here what which who whom whose when where why how all any both each few more most other " +
  "some such no nor not only own same so than too very just also please thanks thank hi hello okay ok yes " +
  "let lets let's i'm it's don't can't get give make tell write explain show want need like one two " +
  // German
  "der die das den dem des ein eine einen einem einer und oder aber ist sind war waren bin bist sein zu im " +
  "mit von für auf aus bei nach wie was wer ich du er sie es wir ihr nicht auch noch nur sehr bitte " +
  // French
  "le la les un une des du de et ou mais est sont était être à au aux en dans sur pour par avec je tu il " +
  "elle nous vous ils elles ne pas que qui quoi ce cette ces mon ton son mes tes ses plus très aussi " +
  // Spanish / Portuguese / Italian
  "el los las unos unas y o pero es son era ser estar en con por para que quien como yo tú él ella " +
  "nosotros no sí muy también os um uma e mas são foi com não sim muito il lo gli uno di da su per " +
  "che chi come io non sono anche " +
  // Dutch
  "het een en of maar zijn was waren te van voor op met ik jij hij zij wij niet ook heel";

export const STOPWORDS: ReadonlySet<string> = new Set(LIST.split(" ").filter((w) => w.length > 0));

const ES_AFTER_S_X_Z_CH_SH = /(?:s|x|z|ch|sh)es$/;

/**
 * Light English stemming so "deploying"/"deployed"/"deploys" meet; other languages pass through mostly unchanged.
 * Rules, first that applies: -ies → -y (length > 5); -ing cut (> 6); -ed cut (> 5); -(s|x|z|ch|sh)es → cut "es"
 * (> 5); -s cut unless -ss. Dispatched on the last letter (only one rule can apply to a word ending in g or d).
 */
export function stem(w: string): string {
  const n = w.length;
  if (n <= 4) return w;
  const last = w.charCodeAt(n - 1);
  if (last === 0x67 /* g */) return n > 6 && w.endsWith("ing") ? w.slice(0, -3) : w;
  if (last === 0x64 /* d */) return n > 5 && w.charCodeAt(n - 2) === 0x65 /* e */ ? w.slice(0, -2) : w;
  if (last !== 0x73 /* s */) return w;
  if (n > 5 && w.endsWith("ies")) return w.slice(0, -3) + "y";
  if (n > 5 && ES_AFTER_S_X_Z_CH_SH.test(w)) return w.slice(0, -2);
  return w.charCodeAt(n - 2) === 0x73 /* s */ ? w : w.slice(0, -1);
}
