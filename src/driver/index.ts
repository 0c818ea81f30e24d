import type { Driver, DriverName } from './types.ts';

/** Drivers are loaded lazily: a SQLite run never loads the network clients, and the other way round. */
export async function loadDriver(name: DriverName): Promise<Driver> {
  switch (name) {
    case 'sqlite':
      return (await import('./sqlite.ts')).sqliteDriver;
    case 'mysql':
      return (await import('./mysql.ts')).mysqlDriver;
    case 'postgres':
      return (await import('./postgres.ts')).postgresDriver;
  }
}
