// Top-level domains accepted for e-mail addresses: every delegated ccTLD plus common generic TLDs.
// A curated subset of the IANA root zone: enough to reject "logo@2x.png" or "user@host.local"
// without shipping the 1,400-entry list.

const CC_TLDS =
  "ac ad ae af ag ai al am ao aq ar as at au aw ax az ba bb bd be bf bg bh bi bj bm bn bo br bs bt bw by bz " +
  "ca cc cd cf cg ch ci ck cl cm cn co cr cu cv cw cx cy cz de dj dk dm do dz ec ee eg er es et eu fi fj fk " +
  "fm fo fr ga gd ge gf gg gh gi gl gm gn gp gq gr gs gt gu gw gy hk hm hn hr ht hu id ie il im in io iq ir " +
  "is it je jm jo jp ke kg kh ki km kn kp kr kw ky kz la lb lc li lk lr ls lt lu lv ly ma mc md me mg mh mk " +
  "ml mm mn mo mp mq mr ms mt mu mv mw mx my mz na nc ne nf ng ni nl no np nr nu nz om pa pe pf pg ph pk pl " +
  "pm pn pr ps pt pw py qa re ro rs ru rw sa sb sc sd se sg sh si sk sl sm sn so sr ss st su sv sx sy sz tc " +
  "td tf tg th tj tk tl tm tn to tr tt tv tw tz ua ug uk us uy uz va vc ve vg vi vn vu wf ws ye yt za zm zw";

const GENERIC_TLDS =
  "com org net edu gov mil int arpa info biz name pro aero coop museum mobi asia tel travel jobs cat post " +
  "app dev page tech cloud online site website xyz top shop store blog email live news art club design " +
  "space digital agency company solutions services systems network global world today life link click " +
  "help support group team studio media consulting finance financial bank insurance capital ventures " +
  "partners legal law lawyer health care clinic dental academy school college university education " +
  "institute foundation fund exchange market money credit loans tax community social chat zone codes " +
  "software engineering technology works tools build security host hosting domains management " +
  "marketing email events center city london berlin paris nyc tokyo amsterdam google amazon microsoft apple " +
  "icu vip win work fun ltd llc inc gmbh plus one new io ninja guru expert rocks earth eco green " +
  "energy solar science systems photo photos pics video tv radio music film games game bet casino " +
  "poker sport fit yoga golf run bike cars auto car taxi trade trading direct deals sale shopping " +
  "express delivery fashion clothing shoes jewelry beauty hair salon spa hotel travel tours flights " +
  "holiday vacations restaurant cafe bar pub pizza food kitchen recipes wine beer farm garden house " +
  "home homes properties property realestate realty rent apartments land estate construction " +
  "contractors plumbing repair cleaning tips guide wiki reviews review report press blog forum chat";

/** Lower-case TLDs considered plausible for an e-mail domain. */
export const EMAIL_TLDS: ReadonlySet<string> = new Set((CC_TLDS + " " + GENERIC_TLDS).split(" "));
