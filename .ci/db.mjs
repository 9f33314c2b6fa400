// create|drop a database on the CI PostgreSQL server: node .ci/db.mjs create ADMIN_URL NAME
import pg from 'pg';

const [op, url, name] = process.argv.slice(2);
if (!/^[a-z0-9_]+$/.test(name ?? '')) throw new Error(`bad database name ${name}`);
const client = new pg.Client({ connectionString: url });
await client.connect();
await client.query(
  op === 'create' ? `create database ${name}` : `drop database if exists ${name} with (force)`,
);
await client.end();
console.log(`${op}d database ${name}`);
