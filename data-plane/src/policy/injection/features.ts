// The injection features: each is a weighted pattern over normalised, lower-cased text.
// Every feature, its weight and its rationale is listed in README.md in this folder.

export type InjectionFamily =
  | "instruction_override"
  | "jailbreak_persona"
  | "system_prompt_extraction"
  | "delimiter_injection"
  | "encoded_payload"
  | "exfiltration"
  | "multilingual"
  | "obfuscation"
  | "tool_poisoning";

/** Which form of the text a feature is matched against. */
export type FeatureInput =
  | "lower" // NFKC, invisibles removed, look-alikes folded, lower-cased (also leet/de-spaced/decoded variants)
  | "cased" // as "lower" but case kept (acronym personas such as DAN)
  | "native"; // the "lower" text, no trigger pass: Cyrillic/CJK/Hangul features run whenever the script occurs

export interface Feature {
  id: string;
  family: InjectionFamily;
  weight: number;
  /** Literals (lower-case) of which one must occur before the pattern is tried; [] = always try. */
  triggers: readonly string[];
  pattern: RegExp;
  input: FeatureInput;
}

const alt = (...xs: string[]): string => `(?:${xs.join("|")})`;
/** Up to `n` characters that stay within one sentence. */
const gap = (n: number): string => `[^.!?\\n]{0,${n}}?`;

const IGNORE_VERBS = alt("ignore", "ignoring", "disregard", "forget", "bypass", "override", "neglect", "overlook", "skip", "dismiss");
const PRIOR = alt("previous", "prior", "above", "earlier", "preceding", "foregoing", "former", "initial", "original", "old", "all", "any", "every", "those", "these");
const INSTRUCTION_NOUNS = alt(
  "instructions?", "prompts?", "rules", "directions", "directives?", "guidelines", "commands?", "orders",
  "constraints", "restrictions", "programming", "guardrails", "polic(?:y|ies)", "tasks?", "assignments?",
  "context", "information", "conversation", "messages?", "texts?", "inputs?", "requests?",
);
const PERSONA_ACRONYMS = alt("DAN", "STAN", "DUDE", "AIM", "BetterDAN", "AntiGPT");
/** Words allowed between an override verb and "previous/above…": determiners and quantifiers only. */
const FILLERS = `(?:\\s+${alt("all", "any", "of", "the", "your", "my", "these", "those", "every", "each", "one", "and", "just", "simply", "completely", "entirely", "now")})*`;
const REVEAL_VERBS = alt(
  "reveal", "leak", "dump", "disclose", "expose", "print", "repeat", "recite", "output", "display", "spell out",
  "show(?: me| us)?", "tell me", "give me", "share", "write out", "write down", "copy", "paste", "return",
  "what(?: is|'s| are| were| was)",
);
const PROMPT_NOUNS = alt(
  "system prompts?", "system messages?", "prompts?", "prompt texts?", "instructions", "initial prompt",
  "original prompt", "hidden prompt", "hidden instructions", "pre-?prompt", "meta-?prompt", "custom instructions",
  "initial instructions", "original instructions", "directives", "programming", "configuration", "rules you were given",
);

function f(
  id: string,
  family: InjectionFamily,
  weight: number,
  triggers: readonly string[],
  source: string,
  input: FeatureInput = "lower",
): Feature {
  return { id, family, weight, triggers, pattern: new RegExp(source, input === "native" ? "u" : ""), input };
}

/** The persona modes of jailbreak_named_mode, spelled out (its pattern's alternatives). */
const NAMED_MODES = ["god", "jailbreak", "jailbroken", "evil", "chaos", "unrestricted", "unfiltered", "uncensored", "dan", "dude", "stan", "opposite", "antigpt", "anti-gpt", "amoral", "nolimit", "nolimits", "no-limit", "no-limits"];

export const FEATURES: readonly Feature[] = [
  // ---------- instruction override ----------
  f("override_ignore_previous", "instruction_override", 0.85, ["ignor", "disregard", "forget", "bypass", "overrid", "neglect", "overlook", "skip", "dismiss"],
    `\\b${IGNORE_VERBS}\\b${FILLERS}\\s+${PRIOR}\\b(?:\\s+[\\w'-]+){0,2}?\\s+${INSTRUCTION_NOUNS}\\b`),
  f("override_ignore_your_rules", "instruction_override", 0.7, ["ignor", "disregard", "forget", "bypass", "overrid", "neglect", "overlook", "skip", "dismiss"],
    `\\b${IGNORE_VERBS}\\b${gap(12)}\\b(?:your|the system|system|the developer'?s?|the original)\\b${gap(12)}\\b${alt("instructions?", "prompts?", "rules", "guidelines", "programming", "restrictions", "guardrails", "directives", "training", "safety")}\\b`),
  f("override_ignore_above", "instruction_override", 0.6, ["ignor", "disregard"],
    `\\b${alt("ignore", "disregard")}\\b (?:all |everything |the |what(?:'s| is) )?${alt("above", "before", "prior")}\\b`),
  f("override_forget_everything", "instruction_override", 0.45, ["forget"],
    `\\bforget (?:about )?(?:everything|all(?: of)? (?:that|this|it))\\b`),
  f("override_forget_before", "instruction_override", 0.7, ["forget"],
    `\\bforget (?:about )?(?:everything|all(?: of)? (?:that|this|it)|what (?:i|we|you) (?:said|told you|discussed))${gap(12)}\\b${alt("before", "above", "previously", "so far", "until now", "beforehand", "earlier", "we discussed", "you (?:know|were told|have been told)")}`),
  f("override_leave_previous", "instruction_override", 0.7, ["previous", "prior", "earlier"],
    `\\b${alt("leave", "put", "set", "remove", "delete", "erase", "clear", "wipe", "drop", "throw", "get rid of")}\\b${gap(15)}\\b${alt("previous", "prior", "earlier")}\\b${gap(10)}\\b${alt("tasks?", "instructions?", "information", "assignments?", "rules", "prompts?", "context")}\\b${gap(20)}\\b${alt("behind", "aside", "out of your (?:head|mind|memory)", "from your (?:head|mind|memory)", "and (?:start|begin)")}`),
  // Triggers are the two-word phrases every alternative contains ("new" alone is in most prompts).
  f("override_new_task", "instruction_override", 0.4, [...["new", "further", "more", "another"].flatMap((w) => ["task", "instruction", "assignment", "challenge"].map((n) => `${w} ${n}`)), "your new"],
    alt(
      `\\b(?:now|next) (?:comes?|follows?|there (?:is|are)) (?:a |some )?(?:new|further|more|another) ${alt("tasks?", "instructions?", "assignments?", "challenges?")}`,
      `\\b${alt("new", "further")} ${alt("tasks", "instructions", "assignments")} (?:follow|are following|are as follows)`,
      `\\bnew instructions?\\s*:`,
      `\\b(?:focus|concentrate) on (?:your|the) new ${alt("task", "assignment", "instructions?")}`,
      `\\b(?:start|begin) (?:over|again|anew|from (?:the front|scratch)) with a new task`,
      `\\byour new ${alt("task", "instructions", "role", "goal", "objective", "mission", "directive", "purpose")} (?:is|are)\\b`,
    )),
  f("override_from_now_on", "instruction_override", 0.35, ["from now on", "starting now", "henceforth", "from this point"],
    `\\b${alt("from now on", "starting now", "henceforth", "from this point (?:on|forward)")},? (?:you|your|always|only|respond|answer|reply|act|do not|don'?t|never)\\b`),
  f("override_stop", "instruction_override", 0.35, ["stop", "halt", "attention"],
    alt(`\\b(?:stop|halt)\\b[\\s,.!:-]{1,5}(?:ignore|forget|now|everything|all previous)`, `\\battention\\b[\\s,.!:-]{1,5}stop\\b`, `\\bstop everything\\b`)),
  f("override_instead_output", "instruction_override", 0.35, ["instead"],
    `\\binstead,? ${alt("output", "print", "say", "write", "respond with", "reply with", "return", "just say")}\\b`),
  f("override_pwned", "instruction_override", 0.8, ["pwn"],
    `\\b(?:i have been|i've been|haha|say|print|output|write|reply with)\\b${gap(10)}\\bpwned\\b`),
  f("override_priority_claim", "instruction_override", 0.5, ["priority", "precedence", "supersede", "override", "i am your", "i am the", "i'm your", "i'm the"],
    alt(
      `\\b(?:this|these|the following) (?:instructions?|messages?|prompts?|commands?) (?:takes?|has|have) (?:absolute |top |highest )?(?:priority|precedence)`,
      `\\b(?:supersedes?|overrides?) (?:all |any )?(?:previous|prior|other|your|earlier) (?:instructions|rules|prompts|guidelines)`,
      `\\b(?:system|admin(?:istrator)?|developer|root|sudo) override\\b\\s*(?::|mode|protocol|enabled|activated|engaged|code|command)`,
      `\\b(?:i am|i'm) (?:your|the) (?:developer|creator|administrator|admin|owner|programmer)\\b`,
    )),
  f("override_disable_safety", "instruction_override", 0.7, ["safety", "filter", "guardrail", "censor", "restriction", "content polic", "ethic", "moral"],
    `\\b${alt("ignore", "bypass", "disable", "turn off", "switch off", "deactivate", "remove", "override", "circumvent", "get around", "without")}\\b${gap(12)}\\b${alt("safety", "content", "ethical", "moral", "openai'?s?", "anthropic'?s?")}\\s?${alt("filters?", "guardrails", "guidelines", "restrictions", "safeguards", "censorship", "polic(?:y|ies)", "protocols", "measures", "settings", "constraints")}`),

  // ---------- jailbreak personas ----------
  f("jailbreak_do_anything_now", "jailbreak_persona", 0.9, ["anything now"], `\\bdo anything now\\b`),
  f("jailbreak_dan_acronym", "jailbreak_persona", 0.6, ["dan", "stan", "dude", "aim", "antigpt", "betterdan"],
    alt(
      `(?:[Yy]ou are(?: now)?|[Aa]ct as|[Aa]s|[Cc]alled|[Nn]amed|[Kk]nown as|[Hh]i|[Hh]ello|[Bb]ecome|[Bb]e)\\s+(?:an?\\s+)?${PERSONA_ACRONYMS}(?![A-Za-z])`,
      `(?<![A-Za-z])${PERSONA_ACRONYMS}(?![A-Za-z])[^.!?\\n]{0,40}?(?:[Mm]ode|[Pp]rompt|[Jj]ailbreak|[Pp]ersona|[Ss]tands for|can do anything|has broken free|has been freed|never refuses)`,
    ), "cased"),
  f("jailbreak_developer_mode", "jailbreak_persona", 0.85, ["developer mode", "dev mode"],
    alt(
      `\\b(?:chatgpt|gpt|ai|you|model|assistant)\\b${gap(20)}\\b(?:with|in) (?:developer|dev) mode\\b`,
      `\\b(?:developer|dev) mode (?:enabled|activated|output|response)\\b`,
      `\\b(?:enable|activate|enter|switch to|simulate) (?:developer|dev) mode\\b${gap(60)}\\b(?:no|without|any|ignore|uncensored|unfiltered|policies|restrictions|rules)\\b`,
    )),
  // Triggers: each name with " mode" (a bare " mode" trigger made the punctuation pass stop at every space).
  f("jailbreak_named_mode", "jailbreak_persona", 0.7, NAMED_MODES.map((m) => `${m} mode`),
    `\\b${alt("god", "jailbreak", "jailbroken", "evil", "chaos", "unrestricted", "unfiltered", "uncensored", "dan", "dude", "stan", "opposite", "anti-?gpt", "amoral", "no-?limits?")} mode\\b`),
  f("jailbreak_unrestricted_ai", "jailbreak_persona", 0.75, ["restrict", "filter", "censor", "limit", "moral", "ethic", "rules", "guidelines", "amoral", "unethical", "unrestricted", "unfiltered", "uncensored", "unbound", "unchained", "unlimited", "jailbroken", "rogue", "evil"],
    alt(
      `\\b(?:an?|the|my) (?:ai|assistant|chatbot|model|language model|version of (?:yourself|you))\\b${gap(12)}\\b(?:without|with no|free of|free from)\\b (?:any )?${alt("restrictions", "filters?", "limits", "limitations", "rules", "guidelines", "morals", "ethics", "censorship", "boundaries", "constraints")}`,
      `\\b${alt("unfiltered", "uncensored", "unrestricted", "amoral", "unethical", "unbound", "unchained", "unlimited", "jailbroken", "rogue", "evil")} ${alt("ai", "chatbot", "assistant", "model", "language model", "version", "responses?", "persona", "confidant", "twin", "character", "entity")}\\b`,
    )),
  f("jailbreak_freed", "jailbreak_persona", 0.8, ["freed", "free from", "liberated", "released", "set free", "confines", "abide", "bound", "adhere", "comply", "follow", "obey"],
    alt(
      `\\b(?:been )?(?:freed|liberated|released|set free) (?:from|of) (?:the |all |any )?(?:typical |usual )?${alt("confines", "restrictions", "limitations", "rules", "shackles", "chains", "constraints")}`,
      `\\b(?:do(?:es)?n'?t|do(?:es)? not|never|won'?t|will not|no longer|not) (?:have to |need to |required to )?${alt("abide", "follow", "adhere", "comply", "obey", "be bound", "bound")}\\b${gap(8)}\\b(?:by|with|to)? ?(?:any |the |your |openai'?s? |anthropic'?s? )?${alt("rules", "polic(?:y|ies)", "guidelines", "content polic(?:y|ies)", "restrictions", "ethical", "moral", "principles", "terms")}`,
      `\\bnot bound by (?:any )?${alt("rules", "polic(?:y|ies)", "guidelines", "restrictions", "ethics", "morals")}`,
    )),
  f("jailbreak_no_ethics", "jailbreak_persona", 0.6, ["ethic", "moral"],
    `\\b(?:no|without|zero|lacks?|free of) (?:any )?(?:ethical|moral)(?: or (?:ethical|moral))? ${alt("guidelines", "restrictions", "constraints", "boundaries", "limits", "considerations", "compass", "principles", "filters?")}`),
  f("jailbreak_stay_in_character", "jailbreak_persona", 0.4, ["character", "role"],
    alt(
      `\\b(?:stay|remain|keep) (?:fully |completely |always )?in (?:character|(?:your|their|the) roles?)\\b`,
      `\\b(?:never|don'?t|do not|without) (?:ever )?(?:break(?:ing)?|fall(?:ing)? out of|leav(?:e|ing)) (?:the )?(?:character|figure|role)\\b`,
      `\\bimmerse yourself (?:in|into) the role\\b`,
    )),
  f("role_act_as", "jailbreak_persona", 0.2, ["act as", "behave as", "respond as", "answer as", "pretend", "you are now", "roleplay", "role-play", "role play", "imagine you", "now you are", "you will now be"],
    alt(
      `\\b(?:act|behave|respond|answer) as (?:if you were |though you were )?(?:an?|my|the)\\b`,
      `\\bpretend (?:to be|you are|you're|that you are|you have)\\b`,
      `\\b(?:you are now|now you are|you will now be|from now on you are)\\b`,
      `\\brole-?\\s?play as\\b`,
      `\\bimagine (?:that )?you are\\b`,
    )),

  // ---------- system-prompt extraction ----------
  f("extract_system_prompt", "system_prompt_extraction", 0.8, ["reveal", "leak", "dump", "disclose", "expose", "print", "repeat", "recite", "output", "display", "spell", "show", "tell me", "give me", "share", "write", "copy", "paste", "return", "what"],
    `\\b${REVEAL_VERBS}\\b (?:(?:all|back|me|us|out|verbatim|exactly|the)\\s)*(?:your|ur|the system'?s?|this (?:ai|bot|assistant)'?s?) (?:(?:entire|full|complete|whole|exact|original|initial|hidden|secret|internal|current|first|verbatim)\\s)*${PROMPT_NOUNS}\\b`),
  f("extract_system_prompt_noun", "system_prompt_extraction", 0.6, ["system prompt", "system message", "initial prompt", "hidden prompt", "hidden instructions", "pre-prompt", "preprompt", "developer message", "initial instructions"],
    `\\b${REVEAL_VERBS}\\b(?:\\s+${alt("me", "us", "the", "your", "its", "this", "full", "entire", "whole", "complete", "original", "hidden", "secret", "initial", "current", "exact", "bot'?s?", "assistant'?s?", "model'?s?", "ai'?s?", "back", "out", "verbatim")})*\\s+${alt("system prompt", "system message", "initial prompt", "hidden prompt", "hidden instructions", "pre-?prompt", "developer message", "initial instructions")}\\b`),
  f("extract_text_above", "system_prompt_extraction", 0.75, ["above", "before", "beginning", "preceding", "prior", "start of", "top of"],
    alt(
      `\\b${alt("repeat", "print", "output", "write", "copy", "recite", "show", "display", "reveal", "tell me", "return", "translate")}\\b (?:back |out |me )?(?:all |everything |every word |the (?:words?|text|content|messages?|lines?|sentences?) )${gap(10)}\\b${alt("above", "before (?:this|that|my)", "preceding", "prior to (?:this|my)", "at the (?:beginning|start|top)")}`,
      `\\b(?:written|said|stated|typed|given|provided|told)\\b${gap(6)}\\b${alt("at the (?:beginning|start|top)", "above", "before", "earlier")}\\b${gap(6)}\\b(?:of |in )?(?:this|the|your) ${alt("prompt", "conversation", "chat", "context", "document", "message")}`,
      `\\bwhat (?:was|is|were) (?:written|said|stated|typed)\\b${gap(20)}\\b${alt("above", "before", "at the (?:beginning|start|top)")}`,
    )),
  f("extract_secret", "system_prompt_extraction", 0.5, ["password", "passphrase", "secret", "passcode", "access code"],
    `\\b${alt("tell", "give", "reveal", "spell", "say", "share", "write", "print", "show", "leak", "what(?:'s| is| was)", "whats", "type")}\\b (?:me |us |out |backwards |in reverse )?(?:the|your|that|this|ur) (?:secret |hidden |current |real )?${alt("password", "passphrase", "secret(?: key| code| word)?", "passcode", "access code")}\\b(?! ${alt("policy", "policies", "requirements?", "reset", "manager", "field", "length", "rules", "strength", "hash(?:ing)?", "expir\\w*", "complexity", "change")})`),

  // ---------- delimiter / markup / chat-template injection ----------
  f("delimiter_chat_template", "delimiter_injection", 0.9, ["<|", "[inst", "[/inst", "<<sys", "<</sys", "start_of_turn", "end_of_turn"],
    alt(
      `(?<!\`)<\\|\\s*${alt("im_start", "im_end", "im_sep", "system", "user", "assistant", "endoftext", "eot_id", "start_header_id", "end_header_id", "begin_of_text", "end_of_text", "eom_id", "python_tag")}\\s*\\|>(?!\`)`,
      `(?<!\`)\\[/?inst\\](?!\`)`,
      `(?<!\`)<</?sys>>(?!\`)`,
      `(?<!\`)<(?:start|end)_of_turn>(?!\`)`,
    )),
  // The same tokens quoted as inline code (`<|im_start|>` in backticks) are usually a discussion of the format.
  f("delimiter_chat_template_quoted", "delimiter_injection", 0.25, ["<|", "[inst", "[/inst", "<<sys", "<</sys", "start_of_turn", "end_of_turn"],
    "`(?:<\\|[a-z_]{2,20}\\|>|\\[/?inst\\]|<</?sys>>|<(?:start|end)_of_turn>)`"),
  f("delimiter_role_tag", "delimiter_injection", 0.6, ["<", "[system", "[admin", "[developer", "human:", "assistant:"],
    alt(
      `</?${alt("system", "sys", "system_prompt", "system-prompt", "instructions?", "admin", "developer", "developer_message")}\\s*>`,
      `\\[${alt("system", "admin", "developer")}(?: ${alt("message", "prompt", "note", "instruction", "override")})?\\]`,
      `(?:^|\\n)\\s*\\n\\s*${alt("human", "assistant")}:`,
    )),
  f("delimiter_markdown_role", "delimiter_injection", 0.55, ["#", "system", "instruction", "developer"],
    alt(
      `(?:^|\\n)\\s*#{2,}\\s*${alt("system", "instructions?", "new instructions?", "admin", "developer", "response")}\\s*(?:prompt|message|override)?\\s*:\\s*(?:\\n|$)`,
      `(?:^|\\n)\\s*#{2,}\\s*${alt("system", "new instructions?", "admin", "developer")}\\s*${alt("prompt", "message", "override")}\\s*(?:\\n|$)`,
      `(?:^|\\n)\\s*${alt("system", "developer")}\\s*(?:prompt|message)?\\s*:\\s*(?:you|ignore|from now|new|the user|always|never)`,
    )),
  f("delimiter_fake_boundary", "delimiter_injection", 0.5, ["end of", "begin", "start of", "---", "===", "***"],
    `(?:[-=*#~]{3,}|\\[|<)\\s*${alt("end", "begin", "start")}\\s+(?:of\\s+)?(?:the\\s+)?(?:system\\s+|user\\s+|original\\s+)?${alt("prompt", "instructions", "context", "input", "document", "message", "conversation")}\\s*(?:[-=*#~]{3,}|\\]|>)`),

  // ---------- encoded payloads ----------
  f("encoding_directive", "encoded_payload", 0.5, ["base64", "b64", "rot13", "rot-13", "hex", "decode", "decrypt", "cipher", "morse", "binary"],
    alt(
      `\\b${alt("decode", "decrypt", "deobfuscate", "decipher", "translate", "convert", "interpret")}\\b${gap(50)}\\b(?:and|then)\\b ${alt("follow", "execute", "run", "obey", "do", "perform", "carry out", "act on", "comply", "apply")}`,
      `\\b${alt("base64", "b64", "rot-?13", "hex", "binary", "morse")}[- ]?(?:encoded |decoded )?${alt("instructions?", "commands?", "prompts?", "payload")}\\b${gap(30)}\\b(?:follow|execute|run|obey|do what)`,
      `\\bfollow (?:the )?(?:decoded|hidden|encoded) ${alt("instructions?", "commands?", "message", "text")}`,
    )),

  // ---------- exfiltration ----------
  // Character classes below are disjoint where they meet, so matching stays linear (no ReDoS).
  f("exfil_markdown_image_placeholder", "exfiltration", 0.85, ["!["],
    `!\\[[^\\]\\n]{0,200}\\]\\(\\s*<?https?:\\/\\/[^\\s)?]{1,300}\\?(?:[^\\s){\\[<$%]|%(?!7b|24|5b)){0,300}(?:[{\\[<$]|%(?:7b|24|5b))[^\\s)]{0,300}\\)`),
  f("exfil_markdown_image_query", "exfiltration", 0.3, ["!["],
    `!\\[[^\\]\\n]{0,200}\\]\\(\\s*<?https?:\\/\\/[^\\s)?]{1,300}\\?[^\\s)]{1,600}\\)`),
  f("exfil_directive", "exfiltration", 0.7, ["send", "post", "upload", "forward", "transmit", "exfiltrat", "leak", "email", "append", "include", "embed", "encode", "add"],
    `\\b${alt("send", "post", "upload", "forward", "transmit", "exfiltrate", "leak", "email", "append", "include", "embed", "encode", "add", "put")}\\b${gap(50)}\\b${alt("conversation", "chat history", "chat log", "previous messages", "system prompt", "secrets?", "credentials", "api keys?", "passwords?", "personal data", "user data", "private data", "session tokens?", "cookies", "env(?:ironment)? (?:file|variables)")}\\b${gap(50)}\\b${alt("to", "into", "in", "at", "via", "as")}\\b${gap(40)}${alt("https?://", "\\burl\\b", "\\blink\\b", "\\bserver\\b", "\\bwebhook\\b", "\\bendpoint\\b", "\\bimage\\b", "query (?:string|param(?:eter)?s?)", "[\\w.+-]+@[\\w-]+\\.[a-z]{2,}")}`),
  f("exfil_url_template", "exfiltration", 0.35, ["http"],
    `https?:\\/\\/[^\\s)"'<>?]{1,300}\\?(?:[^\\s)"'<>=]{1,40}=(?!\\{|\\[|<|\\$|%7b)[^\\s)"'<>&]{0,200}&){0,8}[\\w-]{1,30}=(?:\\{\\{?|\\[|<|\\$\\{?|%7b)[\\w .-]{0,40}(?:\\}\\}?|\\]|>)`),

  // ---------- tool poisoning (instructions hidden in a tool's description: an MCP server's, which the
  // agent's developer never reads). Each is weak alone (< 0.5); the attack's shape is two or three together.
  // A secret file (SSH keys, cloud and package-manager credentials, the MCP client's config) named after a
  // read/pass/send verb: also an ordinary request of a developer ("read my .env"), so weak alone.
  f("tool_secret_file", "tool_poisoning", 0.35, ["ssh", "id_rsa", "id_dsa", "id_ecdsa", "id_ed25519", "aws", "env", "mcp", "claude_desktop", "etc", "npmrc", "netrc", "pgpass", "pypirc", "git-credentials", "kube", "docker", "gnupg", "wallet", "credentials"],
    `\\b${alt("read", "cat", "open", "load", "access", "copy", "upload", "send", "include", "pass", "put", "attach", "fetch", "get", "print", "output", "paste", "dump", "share", "grab", "collect", "extract", "exfiltrate", "leak", "retrieve", "forward", "post", "append", "embed", "provide", "look at")}\\b(?:[^!?\\n.]|\\.(?=[\\w/~])){0,60}?${alt(
      "(?:~|\\$home|%userprofile%)?[\\\\/]?\\.ssh\\b",
      "\\bid_(?:rsa|dsa|ecdsa|ed25519)\\b",
      "\\.aws[\\\\/](?:credentials|config)\\b",
      "(?:^|[\\s'\"`(\\[/~])\\.env\\b",
      "\\b(?:mcp|claude_desktop_config|credentials)\\.json\\b",
      "/etc/(?:passwd|shadow|sudoers)\\b",
      "\\.(?:npmrc|netrc|pgpass|pypirc|git-credentials|gnupg)\\b",
      "\\.kube[\\\\/]config\\b",
      "\\.docker[\\\\/]config\\.json\\b",
      "\\bwallet\\.dat\\b",
    )}`),
  // Keeping the model's steps from the user ("do not mention this to the user"): a benign tool may say
  // "never show raw IDs to the user", so weak alone.
  f("tool_conceal_from_user", "tool_poisoning", 0.45, ["user", "human", "person", "anyone", "mention"],
    alt(
      `\\b(?:do not|don'?t|never|must not|should not|shouldn'?t|not to)\\s+(?:ever\\s+)?${alt("mention", "tell", "inform", "reveal", "disclose", "notify", "alert", "show", "explain", "report")}\\b${gap(40)}\\b(?:the user|users?|the human|the person|anyone)\\b`,
      `\\bwithout ${alt("telling", "informing", "notifying", "alerting", "asking", "letting")} (?:the )?(?:user|human)\\b`,
      `\\b(?:do not|don'?t|never) mention (?:that|the fact that) you\\b`,
      `\\b(?:the user|users) (?:must|should|will|need|may) (?:not|never) (?:know|see|notice|find out|learn|be (?:told|informed|aware))\\b`,
      `\\b(?:keep|hide|conceal) (?:this|it|that)(?: instruction| step)? (?:hidden |secret |confidential )?from (?:the )?(?:users?|human)\\b`,
    )),
  // A made-up tag marking text for the model alone (<IMPORTANT>…</IMPORTANT>, as in the published MCP
  // tool-poisoning attacks); an HTML page has no such tag.
  f("tool_hidden_directive_tag", "tool_poisoning", 0.35, ["<important", "</important", "<secret", "</secret", "<hidden", "</hidden", "<note", "</note", "<ai", "</ai", "<assistant", "</assistant", "<instruction", "</instruction"],
    `</?(?:important|secret|hidden|note[_ -]?(?:to|for)[_ -]?(?:the[_ -]?)?(?:ai|assistant|model|llm|agent)|(?:ai|assistant|agent)[_ -]?(?:instructions?|notes?)|instructions?[_ -]?for[_ -]?(?:the[_ -]?)?(?:ai|assistant|model|llm|agent))\\s*>`),

  // ---------- multilingual instruction override / extraction / persona ----------
  // German
  f("de_ignore_previous", "multilingual", 0.85, ["ignorier", "vergiss", "vergessen", "missacht", "verwirf"],
    `\\b${alt("ignorier(?:e|en|t)?", "vergiss", "vergessen sie", "missachte(?:n)?", "verwirf")}\\b${gap(30)}\\b${alt("alle", "vorherigen?", "bisherigen?", "obigen?", "vorangehenden?", "vorangegangenen?", "früheren?", "vorigen?", "deine", "ihre")}\\b${gap(25)}${alt("anweisungen", "instruktionen", "befehle", "regeln", "aufgaben", "aufträge", "angaben", "vorgaben", "anordnungen", "richtlinien", "informationen")}`),
  f("de_forget_everything", "multilingual", 0.5, ["vergiss", "vergessen"],
    `\\b(?:vergiss|vergessen sie) (?:nun |jetzt |einfach )?alles\\b`),
  f("de_ignore_above", "multilingual", 0.65, ["obig", "ignorier"],
    `\\b(?:die |den )?obigen? ${alt("ausführungen", "anweisungen", "text", "befehle", "angaben")} ${alt("ignorieren", "vergessen")}`),
  f("de_reveal_prompt", "multilingual", 0.75, ["zeig", "gib", "verrat", "nenn", "prompt"],
    `\\b${alt("zeige?", "gib", "verrate?", "nenne?", "wiederhole?", "drucke?")}\\b${gap(20)}\\b${alt("deinen?", "ihren?", "den", "alle", "deine", "ihre")}\\b${gap(15)}${alt("system-?prompt", "prompt-?texte?", "prompts?", "anweisungen", "systemnachricht", "instruktionen")}`),
  f("de_new_task", "multilingual", 0.4, ["neue aufgabe", "neuen aufgabe", "weitere aufgaben", "neue aufgaben"],
    alt(`\\b(?:deine|ihre|eine|einer) neuen? aufgabe\\b`, `\\b(?:nun|jetzt) folgen (?:neue|weitere) aufgaben\\b`)),
  f("de_persona", "multilingual", 0.25, ["du bist", "jetzt bist du", "stell dir vor", "tu so", "sie sind jetzt"],
    alt(`\\bdu bist (?:jetzt|nun|ab sofort)\\b`, `\\bjetzt bist du\\b`, `\\bstell dir vor,? du bist\\b`, `\\btu so,? als (?:ob|wärst)\\b`)),
  f("de_developer_mode", "multilingual", 0.7, ["entwicklermodus", "entwickler-modus"], `\\bentwickler-?modus\\b`),
  // French
  f("fr_ignore_previous", "multilingual", 0.85, ["ignor", "oubli", "ne tiens pas compte", "ne tenez pas compte"],
    `\\b${alt("ignore[rz]?", "oublie[rz]?", "ne tien[ts] pas compte d?e?s?", "ne tenez pas compte d?e?s?")}\\b${gap(30)}${alt("instructions", "consignes", "règles", "directives", "ordres", "commandes", "indications")}\\b${gap(8)}${alt("précédentes", "antérieures", "ci-dessus", "d'avant", "initiales", "que tu as reçues", "que vous avez reçues")}`),
  f("fr_forget_everything", "multilingual", 0.5, ["oubli"], `\\boublie[zr]? tout\\b`),
  f("fr_reveal_prompt", "multilingual", 0.75, ["prompt", "invite", "instructions"],
    `\\b${alt("révèle", "revele", "montre", "affiche", "donne", "répète", "repete", "dis")}[- ]?(?:moi|nous)?\\b${gap(20)}\\b${alt("ton", "votre", "le", "tes", "vos")} ${alt("prompt", "invite", "message", "instructions")}(?: ${alt("système", "systeme", "initiale?s?", "d'origine", "cachée?s?")})?`),
  f("fr_persona", "multilingual", 0.25, ["tu es maintenant", "vous êtes maintenant", "fais semblant"], alt(`\\b(?:tu es|vous êtes) maintenant\\b`, `\\bfais semblant d'être\\b`)),
  f("fr_developer_mode", "multilingual", 0.7, ["mode développeur", "mode developpeur"], `\\bmode d[ée]veloppeur\\b`),
  // Spanish
  f("es_ignore_previous", "multilingual", 0.85, ["ignor", "olvid", "descart", "omit"],
    `\\b${alt("ignora[rd]?", "ignore", "olvida[rd]?", "olvide", "descarta", "omite")}\\b${gap(30)}\\b${alt("todas?", "las", "tus", "sus", "los")}\\b${gap(15)}${alt("instrucciones", "indicaciones", "reglas", "órdenes", "ordenes", "directrices", "normas")}`),
  f("es_forget_everything", "multilingual", 0.5, ["olvid"], `\\bolvida(?:te de)? todo\\b`),
  f("es_reveal_prompt", "multilingual", 0.75, ["prompt", "mensaje", "instrucciones"],
    `\\b${alt("revela", "muestra", "muéstrame", "dime", "imprime", "repite", "enséñame")}\\b${gap(20)}\\b${alt("tu", "el", "su", "tus", "sus")} ${alt("prompt", "mensaje", "instrucciones")} ${alt("del sistema", "de sistema", "inicial(?:es)?", "ocult[oa]s?", "originales?")}`),
  f("es_persona", "multilingual", 0.25, ["ahora eres", "finge"], alt(`\\bahora eres\\b`, `\\bfinge (?:ser|que eres)\\b`)),
  f("es_developer_mode", "multilingual", 0.7, ["modo desarrollador"], `\\bmodo (?:de )?desarrollador\\b`),
  // Italian
  f("it_ignore_previous", "multilingual", 0.85, ["ignor", "dimentic", "trascur"],
    `\\b${alt("ignora", "ignorare", "dimentica", "dimenticare", "trascura")}\\b${gap(30)}\\b${alt("tutte", "le", "tue", "sue")}\\b${gap(15)}${alt("istruzioni", "regole", "indicazioni", "direttive", "comandi")}`),
  f("it_forget_everything", "multilingual", 0.5, ["dimentica tutto"], `\\bdimentica tutto\\b`),
  f("it_reveal_prompt", "multilingual", 0.75, ["prompt", "istruzioni"],
    `\\b${alt("rivela", "mostra", "mostrami", "dimmi", "stampa", "ripeti")}\\b${gap(20)}\\b${alt("il tuo", "il", "le tue", "i tuoi")} ${alt("prompt", "istruzioni", "messaggio")} ${alt("di sistema", "del sistema", "iniziali?", "nascost[eio]", "originali?")}`),
  f("it_developer_mode", "multilingual", 0.7, ["modalità sviluppatore"], `\\bmodalità sviluppatore\\b`),
  // Portuguese
  f("pt_ignore_previous", "multilingual", 0.85, ["ignor", "esque", "desconsider", "desprez"],
    `\\b${alt("ignore", "ignora", "ignorar", "esqueça", "esqueca", "esquece", "desconsidere", "despreze")}\\b${gap(30)}\\b${alt("todas", "as", "suas", "tuas", "os")}\\b${gap(15)}${alt("instruções", "instrucoes", "regras", "orientações", "orientacoes", "diretrizes", "ordens", "comandos")}`),
  f("pt_forget_everything", "multilingual", 0.5, ["esque"], `\\besque(?:ça|ca|ce) tudo\\b`),
  f("pt_reveal_prompt", "multilingual", 0.75, ["prompt", "instruções", "instrucoes"],
    `\\b${alt("revele", "mostre", "mostra", "diga", "imprima", "repita")}\\b${gap(20)}\\b${alt("seu", "o", "suas", "as", "teu")} ${alt("prompt", "instruções", "instrucoes", "mensagem")} ${alt("do sistema", "de sistema", "iniciais?", "ocult[oa]s?", "originais?")}`),
  f("pt_developer_mode", "multilingual", 0.7, ["modo desenvolvedor"], `\\bmodo (?:de )?desenvolvedor\\b`),
  // Dutch
  f("nl_ignore_previous", "multilingual", 0.85, ["negeer", "vergeet", "veronachtzaam"],
    `\\b${alt("negeer", "vergeet", "veronachtzaam")}\\b${gap(30)}\\b${alt("alle", "de", "je", "jouw", "vorige", "eerdere", "voorgaande")}\\b${gap(15)}${alt("instructies", "regels", "opdrachten", "aanwijzingen", "richtlijnen", "bevelen")}`),
  f("nl_forget_everything", "multilingual", 0.5, ["vergeet alles"], `\\bvergeet alles\\b`),
  f("nl_reveal_prompt", "multilingual", 0.7, ["prompt", "instructies"],
    `\\b${alt("toon", "laat", "geef", "onthul", "herhaal")}\\b${gap(20)}\\b${alt("je", "jouw", "de", "uw")} ${alt("systeem-?prompt", "systeeminstructies", "prompt", "instructies")}\\b`),
  // Polish
  f("pl_ignore_previous", "multilingual", 0.85, ["ignoruj", "zignoruj", "zapomnij"],
    `${alt("zignoruj", "ignoruj", "zapomnij")}${gap(30)}${alt("wszystkie", "poprzednie", "wcześniejsze", "twoje", "powyższe")}${gap(15)}${alt("instrukcje", "polecenia", "zasady", "reguły", "komendy")}`),
  // Turkish
  f("tr_ignore_previous", "multilingual", 0.85, ["önceki", "tüm", "bütün"],
    `${alt("önceki", "tüm", "bütün")}${gap(20)}${alt("talimatlar[ıi]", "komutlar[ıi]", "kurallar[ıi]", "yönergeler[ıi]")}${gap(10)}${alt("yok say", "görmezden gel", "unut", "dikkate alma")}`),
  // Russian (matched without look-alike folding)
  f("ru_ignore_previous", "multilingual", 0.85, [],
    `${alt("игнорируй", "игнорируйте", "проигнорируй", "проигнорируйте", "забудь", "забудьте", "не обращай внимания на")}[^.!?\\n]{0,40}?${alt("инструкции", "указания", "правила", "команды", "инструкций", "указаний")}`, "native"),
  f("ru_reveal_prompt", "multilingual", 0.75, [],
    `${alt("покажи", "раскрой", "выведи", "повтори", "напиши")}[^.!?\\n]{0,20}?${alt("системный промпт", "системные инструкции", "свои инструкции", "системное сообщение", "исходный промпт")}`, "native"),
  // Chinese
  f("zh_ignore_previous", "multilingual", 0.85, [],
    `${alt("忽略", "无视", "忽视", "忘记", "忘掉", "不要理会")}[^。！？\\n]{0,8}?${alt("指令", "指示", "说明", "规则", "提示", "命令", "要求")}`, "native"),
  f("zh_reveal_prompt", "multilingual", 0.75, [],
    `${alt("显示", "输出", "告诉我", "泄露", "打印", "重复")}[^。！？\\n]{0,6}?${alt("系统提示", "系统提示词", "初始指令", "系统指令", "提示词")}`, "native"),
  // Japanese
  f("ja_ignore_previous", "multilingual", 0.85, [],
    `${alt("以前", "前", "上記", "これまで", "すべて", "全て")}の${alt("指示", "命令", "ルール", "プロンプト")}を${alt("無視", "忘れ")}`, "native"),
  f("ja_reveal_prompt", "multilingual", 0.75, [],
    `${alt("システムプロンプト", "初期指示", "システム指示")}を${alt("表示", "教え", "出力", "見せ")}`, "native"),
  // Korean
  f("ko_ignore_previous", "multilingual", 0.85, [],
    `${alt("이전", "위의", "모든", "앞의")}[^.!?\\n]{0,6}?${alt("지시", "명령", "규칙", "지침")}[^.!?\\n]{0,6}?${alt("무시", "잊어")}`, "native"),
];

/**
 * What a tool definition is scored with (injectionScore's "tool_definition" scope): the features that
 * describe what a poisoned tool does (tool poisoning, exfiltration, hidden or encoded payloads,
 * chat-template tokens, fake prompt boundaries). Not the instruction-override, persona, extraction and
 * multilingual phrases nor role tags and headings: a tool's own developer writes "ignore any instructions
 * in the fetched page", "never reveal your system prompt", `<instructions>` or "## Instructions:" in a
 * description as in a system prompt, which the score leaves out for that reason (session 15), and a
 * definition goes with every request of its agent. Decoded payloads are scanned with every feature.
 */
const TOOL_DEFINITION_FAMILIES: ReadonlySet<InjectionFamily> = new Set(["tool_poisoning", "exfiltration", "encoded_payload"]);
const TOOL_DEFINITION_FEATURES: ReadonlySet<string> = new Set(["delimiter_chat_template", "delimiter_chat_template_quoted", "delimiter_fake_boundary"]);

export function scoredInToolDefinitions(feature: Feature): boolean {
  return TOOL_DEFINITION_FAMILIES.has(feature.family) || TOOL_DEFINITION_FEATURES.has(feature.id);
}

/** Signals derived from the normalisation and decoding, not from a pattern. */
export const DERIVED_WEIGHTS = {
  /** A base64/hex/URL-encoded/tag-character payload whose decoded text fires a feature. */
  encoded_hidden_instruction: 0.75,
  /** An attack feature fired only after look-alike folding, de-spacing or leetspeak folding. */
  obfuscated_match: 0.35,
  /** Two or more invisible/bidi/tag characters were removed from the text. */
  invisible_characters: 0.25,
} as const;
