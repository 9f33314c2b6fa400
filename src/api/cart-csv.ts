// The cart's CSV (CONTRACT.md "Carts": GET /cart/template.csv, POST /cart/upload): columns
// market,offer_key,qty,note. Multipart is read by @fastify/busboy and CSV by csv-parse /
// csv-stringify, never by hand; both are bounded (size and rows), and the refusal says the bound.
import { Busboy } from '@fastify/busboy';
import { CsvError, parse } from 'csv-parse/sync';
import { stringify } from 'csv-stringify/sync';
import { HttpError } from '../http/route.js';
import { hasBadChars } from '../http/validation.js';

export const CSV_COLUMNS = ['market', 'offer_key', 'qty', 'note'] as const;
/** Most bytes of an uploaded CSV (far below the request body limit, far above a cart's worth of lines). */
export const UPLOAD_MAX_BYTES = 256 * 1024;
/** Most data rows of one upload. */
export const UPLOAD_MAX_ROWS = 500;
const NOTE_MAX = 255;
/** A qty of more digits is no deal's max_qty (the cart actor clamps to it anyway). */
const QTY_RE = /^\d{1,6}$/;

/** The file of a multipart form's field `file`. */
export function uploadedFile(
  bytes: Buffer | null | undefined,
  contentType: string,
): Promise<Buffer> {
  if (!/^multipart\/form-data\b/i.test(contentType)) {
    return Promise.reject(
      new HttpError(415, 'upload the CSV as multipart/form-data with the field "file"'),
    );
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let found = false;
    let tooLarge = false;
    let bb: ReturnType<typeof Busboy>;
    try {
      bb = Busboy({
        headers: { 'content-type': contentType },
        limits: { files: 1, fileSize: UPLOAD_MAX_BYTES, fields: 20, parts: 21 },
      });
    } catch (err) {
      return reject(new HttpError(400, `not a readable multipart form: ${(err as Error).message}`));
    }
    const unreadable = (err: unknown) =>
      reject(new HttpError(400, `not a readable multipart form: ${(err as Error).message}`));
    bb.on('file', (name, stream) => {
      // A part cut off before its closing boundary errors on its own stream: unhandled, that error
      // would end the process, so every part's stream, read or skipped, reports it here.
      stream.on('error', unreadable);
      if (name !== 'file') return void stream.resume();
      found = true;
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('limit', () => (tooLarge = true));
    });
    bb.on('error', unreadable);
    bb.on('finish', () => {
      if (tooLarge)
        reject(
          new HttpError(
            413,
            `the CSV is larger than ${UPLOAD_MAX_BYTES / 1024} KiB, the most one upload takes: split it`,
          ),
        );
      else if (!found)
        reject(
          new HttpError(422, [
            { loc: ['body', 'file'], msg: 'Field required: the CSV file', type: 'missing' },
          ]),
        );
      else resolve(Buffer.concat(chunks));
    });
    bb.end(bytes ?? Buffer.alloc(0));
  });
}

export type CsvRow = { row: number; fields: Record<string, string | undefined>; columns: string[] };

/** The data rows (1 = the first after the header) with their fields by the header's column names. */
export function csvRows(file: Buffer): CsvRow[] {
  let records: string[][];
  try {
    // One record past the bound is read, to tell a file at the bound from one above it.
    records = parse(file, {
      bom: true,
      skip_empty_lines: true,
      relax_column_count: true,
      trim: true,
      to: UPLOAD_MAX_ROWS + 2,
    });
  } catch (err) {
    if (err instanceof CsvError) throw new HttpError(400, `the CSV cannot be read: ${err.message}`);
    throw err;
  }
  if (!records.length)
    throw new HttpError(
      400,
      `the CSV is empty: its first line names the columns ${CSV_COLUMNS.join(',')} (see /cart/template.csv)`,
    );
  const columns = records[0].map((h) => h.toLowerCase());
  const missing = ['market', 'offer_key'].filter((c) => !columns.includes(c));
  if (missing.length) {
    throw new HttpError(
      400,
      `the CSV's first line must name the columns ${CSV_COLUMNS.join(',')} (missing: ${missing.join(', ')}); see /cart/template.csv`,
    );
  }
  if (records.length - 1 > UPLOAD_MAX_ROWS)
    throw new HttpError(413, `at most ${UPLOAD_MAX_ROWS} rows per upload: split the CSV`);
  return records.slice(1).map((r, i) => ({
    row: i + 1,
    columns,
    fields: Object.fromEntries(columns.map((c, k) => [c, r[k]])),
  }));
}

export type RowRequest = { market: string; offer_key: string; qty: number; note: string };

/** What a row asks for, or why it cannot be a line (the deal itself is looked up by the caller). */
export function rowRequest(r: CsvRow): RowRequest | string {
  const absent = CSV_COLUMNS.filter(
    (c) => r.columns.includes(c) && c !== 'note' && r.fields[c] === undefined,
  );
  if (absent.length)
    return `missing column ${absent.join(', ')}: the row has fewer fields than the header`;
  const { market = '', offer_key = '', qty = '', note = '' } = r.fields;
  if (!market) return 'market is empty';
  if (!offer_key) return 'offer_key is empty';
  if (qty !== '' && (!QTY_RE.test(qty) || Number(qty) < 1))
    return `qty must be a whole number of at least 1, not ${JSON.stringify(qty.slice(0, 40))}`;
  if (note.length > NOTE_MAX) return `note has more than ${NOTE_MAX} characters`;
  const bad = CSV_COLUMNS.filter((c) => hasBadChars(r.fields[c] ?? ''));
  if (bad.length)
    return `${bad.join(', ')} contains NUL characters or unpaired surrogates, which no field may carry`;
  return { market, offer_key, qty: qty === '' ? 1 : Number(qty), note };
}

/** The template: the header and one sample row (a deal of the current menu, when there is one). */
export function templateCsv(sample?: { market: string; key: string }): string {
  const rows: (string | number)[][] = [[...CSV_COLUMNS]];
  if (sample)
    rows.push([
      sample.market,
      sample.key,
      1,
      'why this line (shown to the holder); the key is valid during its session only',
    ]);
  return stringify(rows);
}
