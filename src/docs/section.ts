// A section of the guide: one source for /llms.txt (plain text) and the docs pages (HTML).
export type Section = { id: string; title: string; ordered?: boolean; items: string[] };
