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

// Comments, CDATA sections and processing instructions are matched whole so that text inside them is skipped; only a
// `<!DOCTYPE` or `<!ENTITY` outside them is a declaration (an unterminated one is scanned as markup: refused).
const MARKUP = /<!--[\s\S]*?-->|<!\[CDATA\[[\s\S]*?\]\]>|<\?[\s\S]*?\?>|<!\s*(doctype|entity)/gi;

function declaresDtd(xml: string): boolean {
  for (const match of xml.matchAll(MARKUP)) if (match[1]) return true;
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
