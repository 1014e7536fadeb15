/**
 * The check of the dashboard's route table (src/dashboard/routeAccess.ts) when the dashboard is
 * built: a route without an entry, a form without a step-up decision, a page with one, a name used
 * twice or an entry without its route stops the build. test/dashboard/routeAccess.test.ts walks the
 * real routes over HTTP.
 */
import { describe, expect, it } from 'vitest';
import { accessOf, ROUTE_ACCESS, type RegisteredRoute } from '../../../src/dashboard/routeAccess.ts';

const GET = ['HEAD', 'GET'];
const POST = ['POST'];

/** A stand-in route for every entry of the table, GET or POST as the entry says. */
const allRoutes = (): RegisteredRoute[] =>
  Object.entries(ROUTE_ACCESS).map(([name, access]) => ({ name, methods: access.stepUp ? POST : GET, path: `/dashboard/${name}` }));

describe('accessOf', () => {
  it('gives each route its entry when every route has one and every entry a route', () => {
    const routes = allRoutes();
    const found = accessOf(routes);
    expect(found.size).toBe(routes.length);
    expect(found.get(routes.find((route) => route.name === 'team.invite')!)?.stepUp?.ask).toBe('fresh-code');
  });

  it('refuses a route without a name or without an entry', () => {
    // The message says which route: its methods, path and name.
    expect(() => accessOf([...allRoutes(), { name: undefined, methods: GET, path: '/dashboard/new' }])).toThrow('The dashboard route HEAD,GET /dashboard/new (no name) has no entry in ROUTE_ACCESS');
    expect(() => accessOf([...allRoutes(), { name: 'new-page', methods: GET, path: '/dashboard/new' }])).toThrow('HEAD,GET /dashboard/new (new-page) has no entry');
    // A name the prototype of a plain object has is no entry either.
    expect(() => accessOf([...allRoutes(), { name: 'constructor', methods: GET, path: '/dashboard/new' }])).toThrow(/no entry/);
  });

  it('refuses a form without a step-up decision, and a page with one', () => {
    const routes = allRoutes();
    routes.find((route) => route.name === 'team')!.methods = POST;
    expect(() => accessOf(routes)).toThrow(/team .*every form, and only a form/);
    const again = allRoutes();
    again.find((route) => route.name === 'team.invite')!.methods = GET;
    expect(() => accessOf(again)).toThrow(/team\.invite .*every form, and only a form/);
  });

  it('refuses a name used twice, and an entry whose route is gone', () => {
    expect(() => accessOf([...allRoutes(), { name: 'team', methods: GET, path: '/dashboard/team2' }])).toThrow(/Two dashboard routes are named team/);
    expect(() => accessOf(allRoutes().filter((route) => route.name !== 'audit'))).toThrow(/does not have: audit\./);
    expect(() => accessOf(allRoutes().filter((route) => route.name !== 'audit' && route.name !== 'team'))).toThrow(/does not have: (team, audit|audit, team)\./);
  });
});
