// The whole site on one day of recorded history, in one process on one shared service
// (sharedRecordedSite): every page crawled and validated, every kind of page checked in Chromium,
// a visitor's and a holder's walk. A service start and a process instead of one per module; each
// module in site/ adds agents and holders of its own. Run one module's with --grep on its
// subtests' names.
import { runModules } from '../helpers/service.js';
import { fileTimeout } from '../helpers/file-timeout.js';

fileTimeout(400); // a crawl of every page, then Chromium on 30 pages and a walk

await runModules(new URL('./site/', import.meta.url), ['crawl', 'quality', 'walk']);
