/**
 * Syntax highlighting without HTML: the text is cut into tokens by regular expressions and
 * each token becomes a span whose textContent is the token. Long text is shown plain.
 */
import { el } from './dom';

/** Above this many lines the text is shown without colors (one text node). */
export const HIGHLIGHT_LINES = 3000;

type Rule = [RegExp, string];

const PY_KEYWORDS =
  'def|for|in|range|if|else|elif|return|with|as|import|from|pass|and|or|not|None|True|False|lambda|while';
const C_KEYWORDS =
  'if|else|for|while|return|void|int|float|double|char|bool|const|unsigned|signed|long|short|struct|extern|static|inline|__global__|__device__|__shared__|__syncthreads|__restrict__|half|int64_t|int32_t';
const LLVM_KEYWORDS =
  'define|declare|ret|br|label|call|load|store|getelementptr|inbounds|alloca|phi|icmp|fcmp|add|fadd|mul|fmul|sub|fsub|fdiv|sdiv|udiv|and|or|xor|shl|lshr|ashr|select|to|ptr|void|float|double|half|i1|i8|i16|i32|i64|nsw|nuw|align|noalias|nocapture|attributes|target|datalayout|triple|tail|fast|zeroinitializer|insertelement|extractelement|shufflevector';

const RULES: Record<string, Rule[]> = {
  python: [
    [/#[^\n]*/y, 'al-tok-com'],
    [/"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'/y, 'al-tok-str'],
    [/@[A-Za-z_][\w.]*/y, 'al-tok-dec'],
    [new RegExp(`\\b(?:${PY_KEYWORDS})\\b`, 'y'), 'al-tok-kw'],
    [/\b\d+(?:\.\d*)?(?:e[+-]?\d+)?\b/y, 'al-tok-num'],
    [/\b[A-Za-z_]\w*(?=\()/y, 'al-tok-fn']
  ],
  c: [
    [/\/\/[^\n]*|\/\*[\s\S]*?\*\//y, 'al-tok-com'],
    [/"(?:[^"\\\n]|\\.)*"/y, 'al-tok-str'],
    [/#\s*\w+/y, 'al-tok-dec'],
    [new RegExp(`\\b(?:${C_KEYWORDS})\\b`, 'y'), 'al-tok-kw'],
    [/\b\d+(?:\.\d*)?(?:e[+-]?\d+)?[fFuUlL]*\b/y, 'al-tok-num'],
    [/\b[A-Za-z_]\w*(?=\()/y, 'al-tok-fn']
  ],
  llvm: [
    [/;[^\n]*/y, 'al-tok-com'],
    [/"(?:[^"\\\n]|\\.)*"/y, 'al-tok-str'],
    [/[@%][-\w.$]+/y, 'al-tok-fn'],
    [new RegExp(`\\b(?:${LLVM_KEYWORDS})\\b`, 'y'), 'al-tok-kw'],
    [/-?\b\d+(?:\.\d*)?(?:e[+-]?\d+)?\b|\b0x[0-9A-Fa-f]+\b/y, 'al-tok-num']
  ],
  asm: [
    [/[#;][^\n]*/y, 'al-tok-com'],
    [/^\s*[\w.$]+:/my, 'al-tok-fn'],
    [/%\w+/y, 'al-tok-kw'],
    [/\$?-?\b(?:0x[0-9A-Fa-f]+|\d+)\b/y, 'al-tok-num'],
    [/^\s*\.\w+/my, 'al-tok-dec']
  ]
};
RULES.cuda = RULES.c;
RULES.ptx = RULES.asm;

/** The rules of a language name (plain text for an unknown one). */
function rulesOf(language: string): Rule[] {
  return RULES[language] ?? [];
}

/** A `<pre>` with `text` highlighted as `language` (every token set as textContent). */
export function codeBlock(text: string, language: string, className = 'al-code'): HTMLElement {
  const pre = el('pre', className);
  pre.dataset.language = language;
  const rules = rulesOf(language);
  const lines = text.split('\n').length;
  if (!rules.length || lines > HIGHLIGHT_LINES) {
    pre.textContent = text;
    return pre;
  }
  let plain = '';
  const flush = (): void => {
    if (plain) {
      pre.appendChild(document.createTextNode(plain));
      plain = '';
    }
  };
  let pos = 0;
  while (pos < text.length) {
    let matched = false;
    for (const [re, cls] of rules) {
      re.lastIndex = pos;
      const m = re.exec(text);
      if (m && m.index === pos && m[0].length > 0) {
        flush();
        pre.appendChild(el('span', cls, m[0]));
        pos += m[0].length;
        matched = true;
        break;
      }
    }
    if (!matched) {
      // copy up to the next position a token could start at (a word edge or a symbol)
      const rest = /^(?:\w+|\s+|[^\w\s])/.exec(text.slice(pos, pos + 200));
      const n = rest ? rest[0].length : 1;
      plain += text.slice(pos, pos + n);
      pos += n;
    }
  }
  flush();
  return pre;
}
