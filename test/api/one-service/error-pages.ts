// Browsers get HTML error pages on the site: a page not found (404), a cross-site form
// post refused (403), and the page the app renders for 429 and 500, each in the site's layout with
// words for what to do next; JSON clients and /api/ keep their {"detail"} answers.
import t from 'tap';
import { errorPage } from '../../../src/web/pages.js';
import { getPage, postForm, sharedWebService } from '../../helpers/web.js';

const svc = await sharedWebService();

const html = (r: { headers: Headers }) => r.headers.get('content-type') ?? '';

t.test('404: a page for browsers, JSON for JSON clients and under /api/', async (t) => {
  const page = await getPage(svc, '/no/such/page');
  t.equal(page.status, 404);
  t.match(html(page), /text\/html/);
  t.match(page.text, '<h1>Page not found</h1>');
  t.match(page.text, 'Nothing is at this address.');
  t.match(page.text, 'href="/static/site.css"', "in the site's layout");
  const json = await getPage(svc, '/no/such/page', { json: true });
  t.same(json.body, { detail: 'Not Found' });
  const api = await getPage(svc, '/api/v1/no/such');
  t.match(html(api), /application\/json/);
});

t.test('403: a cross-site form post is refused with a page that says what to do', async (t) => {
  const headers = { 'sec-fetch-site': 'cross-site' };
  const page = await postForm(
    svc,
    '/login',
    { email: 'a@example.org', password: 'whatever1' },
    { headers },
  );
  t.equal(page.status, 403);
  t.match(html(page), /text\/html/);
  t.match(page.text, '<h1>Not allowed</h1>');
  t.match(page.text, 'cross-site request refused');
  t.match(page.text, 'open this site yourself');
  const json = await postForm(
    svc,
    '/login',
    { email: 'a@example.org', password: 'whatever1' },
    { headers, json: true },
  );
  t.equal(json.status, 403);
  t.same(json.body, { detail: 'cross-site request refused' }, 'JSON clients keep the detail');
});

t.test('429 and 500 pages: the status, the words, what to do next', async (t) => {
  const many = errorPage(429, 'too many registrations from your address; try again in 12 minutes');
  t.equal(many.status, 429);
  const text = String(many.body);
  t.match(text, '<h1>Too many requests</h1>');
  t.match(text, 'try again in 12 minutes');
  t.match(text, 'Retry-After');
  const broken = errorPage(500, 'TypeError: x is undefined');
  t.equal(broken.status, 500);
  t.match(String(broken.body), '<h1>Something went wrong on our side</h1>');
  t.notMatch(String(broken.body), 'TypeError', 'no internals shown');
  t.match(String(broken.body), 'please try again');
});
