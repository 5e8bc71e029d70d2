// A provider's page body (bytes already capped) into the normalised page: XML with any namespace, or JSON.
// No DTD or entity of any kind is ever processed: a document declaring one is refused before parsing.
import type { XMLParser } from 'fast-xml-parser';
import { lazyModule } from '../../core/lazy-module.ts';
import { normalisePage, type FeedPage } from './telematics-feed.rules.ts';

/** Why a run stops: the message is the run's `error` (never a secret, never the body beyond a short excerpt). */
export class FeedError extends Error {}

export const NOT_ISO = 'not an ISO 15143-3 document';

// Loaded on the first XML page, not at start-up: most processes never read a feed.
const fxp = lazyModule<typeof import('fast-xml-parser')>('fast-xml-parser');
let parser: XMLParser | undefined;
const xmlParser = () =>
  (parser ??= new (fxp().XMLParser)({
    ignoreAttributes: false,
    attributeNamePrefix: '',
    textNodeName: '#text',
    removeNSPrefix: true,
    parseTagValue: false,
    parseAttributeValue: false,
    processEntities: false,
    ignoreDeclaration: true,
    ignorePiTags: true,
    trimValues: true,
  }));

const DECLARATION = /<!\s*(doctype|entity)/iy;
const DECLARATION_ANYWHERE = /<!\s*(doctype|entity)/i;
/** Markup whose content is not markup: what ends it. */
const OPAQUE: [string, string][] = [
  ['<!--', '-->'],
  ['<![CDATA[', ']]>'],
  ['<?', '?>'],
];

/**
 * Whether a `<!DOCTYPE` or `<!ENTITY` stands outside comments, CDATA sections and processing instructions, in one
 * pass (a hostile page cannot make it quadratic). Text after one of those that never ends is scanned as markup, so
 * a declaration there is refused too (the page is malformed anyway).
 */
function declaresDtd(xml: string): boolean {
  for (let at = xml.indexOf('<'); at >= 0; at = xml.indexOf('<', at + 1)) {
    DECLARATION.lastIndex = at;
    if (DECLARATION.test(xml)) return true;
    const opaque = OPAQUE.find(([open]) => xml.startsWith(open, at));
    if (!opaque) continue;
    const end = xml.indexOf(opaque[1], at + opaque[0].length);
    if (end < 0) return DECLARATION_ANYWHERE.test(xml.slice(at + opaque[0].length));
    at = end + opaque[1].length - 1;
  }
  return false;
}

/** Parses and normalises one page; throws FeedError with a clear reason for anything that is not a Fleet page. */
export function parseFeedPage(body: string, contentType: string | null): FeedPage {
  const start = body.replace(/^\uFEFF/, '').trimStart();
  const type = (contentType ?? '').toLowerCase();
  if (type.includes('text/html') || /^<(!doctype\s+html|html[\s>])/i.test(start))
    throw new FeedError(`${NOT_ISO}: the provider answered with an HTML page (a login page or a wrong URL?)`);
  let doc: unknown;
  if (start.startsWith('<')) {
    if (declaresDtd(start)) throw new FeedError(`${NOT_ISO}: the XML declares a DTD or entities, which are refused`);
    const valid = fxp().XMLValidator.validate(start);
    if (valid !== true) throw new FeedError(`malformed XML: ${valid.err.msg} (line ${valid.err.line})`);
    try {
      doc = xmlParser().parse(start);
    } catch (err) {
      // What the validator lets through and the parser still refuses (nesting deeper than it accepts).
      throw new FeedError(`malformed XML: ${(err as Error).message.slice(0, 200)}`);
    }
  } else if (start.startsWith('{') || start.startsWith('[')) {
    try {
      doc = JSON.parse(start);
    } catch (err) {
      throw new FeedError(`malformed JSON: ${(err as Error).message.slice(0, 200)}`);
    }
  } else throw new FeedError(`${NOT_ISO}: the body is neither XML nor JSON`);
  let page: FeedPage | null;
  try {
    page = normalisePage(doc);
  } catch (err) {
    // The normaliser is bounded; a structure it still cannot walk is the provider's, not a fault of this service.
    if (!(err instanceof RangeError)) throw err;
    throw new FeedError(`${NOT_ISO}: the structure is too deeply nested`);
  }
  if (!page) throw new FeedError(`${NOT_ISO}: no Fleet, Equipment or Links in the body`);
  return page;
}
