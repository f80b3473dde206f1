/* cluster_io.c - the profile's "cluster" object (rf_cluster.h): written by
 * `roofline measure --mpi`, read wherever --hw takes that profile. */
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "cluster_io.h"
#include "io_json.h"

/* ---- writing ------------------------------------------------------------ */

static int put(json_t *obj, const char *key, json_t *v)
{
    return v ? json_object_set_new(obj, key, v) : -1;
}

/* json_array_append_new takes v in every case; a NULL v is a failure. */
static int append(json_t *a, json_t *v) { return v ? json_array_append_new(a, v) : -1; }

static json_t *node_json(const rf_cluster_node *n)
{
    json_t *o = json_object(), *peaks = json_object();
    bool ok = o && peaks;
    for (int k = 0; ok && k < RF_DTYPE_COUNT; k++)
        if (n->peak_flops_per_s[k] > 0)
            ok = !put(peaks, rf_dtype_name((rf_dtype_kind)k), json_real(n->peak_flops_per_s[k]));
    ok = ok && !put(o, "name", json_string(n->name)) && !put(o, "ranks", json_integer(n->ranks)) &&
         !put(o, "devices", json_integer(n->devices)) &&
         !put(o, "bandwidth_bytes_per_s", json_real(n->bandwidth_bytes_per_s));
    if (ok) {
        ok = !put(o, "peak_flops_per_s", peaks);
        peaks = NULL;
    }
    json_decref(peaks);
    return ok ? o : (json_decref(o), NULL);
}

static json_t *point_json(const rf_cluster_link *l, const rf_cluster_point *p)
{
    json_t *o = json_object();
    if (!o || put(o, "bytes", json_integer((json_int_t)p->bytes)) ||
        put(o, "time_s", json_real(p->time_s)) || put(o, "median_s", json_real(p->median_s)) ||
        put(o, "iterations", json_integer((json_int_t)p->iterations)) ||
        put(o, "algbw_bytes_per_s", json_real(rf_cluster_algbw(p))) ||
        put(o, "busbw_bytes_per_s", json_real(rf_cluster_busbw(l, p))))
        return json_decref(o), NULL;
    return o;
}

static json_t *link_json(const rf_cluster_link *l)
{
    json_t *o = json_object(), *pts = json_array();
    bool ok = o && pts;
    for (size_t i = 0; ok && i < l->n_points; i++)
        ok = !append(pts, point_json(l, &l->points[i]));
    ok = ok && !put(o, "class", json_string(rf_link_class_name(l->cls))) &&
         !put(o, "collective", json_string(rf_cluster_kind_name(l->kind))) &&
         !put(o, "ranks", json_integer(l->ranks)) &&
         !put(o, "latency_s", json_real(l->latency_s)) &&
         !put(o, "bandwidth_bytes_per_s", json_real(l->bw_bytes_per_s)) &&
         !put(o, "residual", json_real(l->residual)) &&
         !put(o, "min_bytes", json_integer(l->n_points ? (json_int_t)l->points[0].bytes : 0)) &&
         !put(o, "max_bytes",
              json_integer(l->n_points ? (json_int_t)l->points[l->n_points - 1].bytes : 0));
    if (ok) {
        ok = !put(o, "points", pts);
        pts = NULL;
    }
    json_decref(pts);
    return ok ? o : (json_decref(o), NULL);
}

json_t *rf__cluster_json(const rf_cluster *c)
{
    json_t *o = json_object(), *nodes = json_array(), *links = json_array();
    bool ok = o && nodes && links;
    for (size_t i = 0; ok && i < c->n_nodes; i++)
        ok = !append(nodes, node_json(&c->nodes[i]));
    for (size_t i = 0; ok && i < c->n_links; i++)
        ok = !append(links, link_json(&c->links[i]));
    ok = ok && !put(o, "ranks", json_integer(c->ranks)) && !put(o, "mpi", json_string(c->mpi));
    if (ok) {
        ok = !put(o, "nodes", nodes);
        nodes = NULL;
    }
    if (ok) {
        ok = !put(o, "links", links);
        links = NULL;
    }
    json_decref(nodes);
    json_decref(links);
    return ok ? o : (json_decref(o), NULL);
}

/* ---- reading ------------------------------------------------------------ */

static rf_status read_node(const rf__json_doc *r, json_t *o, const char *at, rf_cluster_node *n)
{
    int64_t ranks = 0, devices = 0;
    rf_status s;
    if (!json_is_object(o))
        return rf__json_fail(r->err, r->origin, "%.*s must be an object", (int)strlen(at) - 1, at);
    if ((s = rf__field_string(r, o, at, "name", true, n->name, sizeof n->name)) ||
        (s = rf__field_whole(r, o, at, "ranks", true, 1, 1 << 20, &ranks)) ||
        (s = rf__field_whole(r, o, at, "devices", true, 0, 1 << 20, &devices)) ||
        (s = rf__field_number(r, o, at, "bandwidth_bytes_per_s", true, &n->bandwidth_bytes_per_s)))
        return s;
    char path[96];
    snprintf(path, sizeof path, "%sbandwidth_bytes_per_s", at);
    if ((s = rf__figure_check(r->origin, path, n->bandwidth_bytes_per_s, RF__FIG_BW, false,
                              r->err)))
        return s;
    n->ranks = (int)ranks;
    n->devices = (int)devices;
    json_t *peaks = json_object_get(o, "peak_flops_per_s");
    if (!peaks)
        return RF_OK;
    if (!json_is_object(peaks))
        return rf__json_fail(r->err, r->origin,
                             "%speak_flops_per_s must be an object keyed by dtype", at);
    const char *key;
    json_t *v;
    json_object_foreach(peaks, key, v)
    {
        rf_dtype dt;
        snprintf(path, sizeof path, "%speak_flops_per_s.", at);
        if (rf_dtype_parse(key, &dt, NULL))
            return rf__json_fail(r->err, r->origin, "%s: unknown dtype '%s'", path, key);
        if ((s = rf__field_number(r, peaks, path, key, true, &n->peak_flops_per_s[dt.kind])))
            return s;
        snprintf(path, sizeof path, "%speak_flops_per_s.%s", at, key);
        if ((s = rf__figure_check(r->origin, path, n->peak_flops_per_s[dt.kind], RF__FIG_PEAK, true,
                                  r->err)))
            return s;
    }
    return RF_OK;
}

static rf_status read_point(const rf__json_doc *r, json_t *o, const char *at, rf_cluster_point *p)
{
    int64_t bytes = 0;
    rf_status s;
    if (!json_is_object(o))
        return rf__json_fail(r->err, r->origin, "%.*s must be an object", (int)strlen(at) - 1, at);
    if ((s = rf__field_whole(r, o, at, "bytes", true, 1, (int64_t)1 << 40, &bytes)) ||
        (s = rf__field_number(r, o, at, "time_s", true, &p->time_s)) ||
        (s = rf__field_number(r, o, at, "median_s", true, &p->median_s)) ||
        (s = rf__field_whole(r, o, at, "iterations", true, 1, (int64_t)1 << 40, &p->iterations)))
        return s;
    p->bytes = (uint64_t)bytes;
    const struct {
        const char *key;
        double v;
    } times[] = {{"time_s", p->time_s}, {"median_s", p->median_s}};
    for (size_t i = 0; i < 2; i++) {
        char path[96];
        snprintf(path, sizeof path, "%s%s", at, times[i].key);
        if ((s = rf__figure_check(r->origin, path, times[i].v, RF__FIG_TIME, false, r->err)))
            return s;
    }
    return RF_OK;
}

static rf_status read_link(const rf__json_doc *r, json_t *o, const char *at, rf_cluster_link *l)
{
    char cls[24] = "", kind[24] = "";
    int64_t ranks = 0;
    rf_status s;
    if (!json_is_object(o))
        return rf__json_fail(r->err, r->origin, "%.*s must be an object", (int)strlen(at) - 1, at);
    if ((s = rf__field_string(r, o, at, "class", true, cls, sizeof cls)) ||
        (s = rf__field_string(r, o, at, "collective", true, kind, sizeof kind)))
        return s;
    l->cls = RF_LINK_CLASS_COUNT;
    for (int c = 0; c < RF_LINK_CLASS_COUNT; c++)
        if (!strcmp(cls, rf_link_class_name((rf_link_class)c)))
            l->cls = (rf_link_class)c;
    if (l->cls == RF_LINK_CLASS_COUNT)
        return rf__json_fail(r->err, r->origin, "%sclass '%s' is neither intra-node nor inter-node",
                             at, cls);
    l->kind = RF_LINK_FIT_KINDS;
    for (int k = 0; k < RF_LINK_FIT_KINDS; k++)
        if (!strcmp(kind, rf_cluster_kind_name((rf_coll_kind)k)))
            l->kind = (rf_coll_kind)k;
    if ((int)l->kind == RF_LINK_FIT_KINDS)
        return rf__json_fail(r->err, r->origin,
                             "%scollective '%s' is not all-reduce, all-gather, all-to-all or send",
                             at, kind);
    /* what the link is, for every message below */
    char named[64];
    snprintf(named, sizeof named, "%.*s (%s, %s): ", (int)strlen(at) - 1, at, kind, cls);
    json_t *pts = NULL;
    if ((s = rf__field_whole(r, o, named, "ranks", true, 0, 1 << 20, &ranks)) ||
        (s = rf__field_number(r, o, named, "latency_s", true, &l->latency_s)) ||
        (s = rf__field_number(r, o, named, "bandwidth_bytes_per_s", true, &l->bw_bytes_per_s)) ||
        (s = rf__field_number(r, o, named, "residual", true, &l->residual)) ||
        (s = rf__field_array(r, o, named, "points", true, RF_CLUSTER_MAX_POINTS, &pts)))
        return s;
    l->ranks = (int)ranks;
    for (size_t i = 0; i < json_array_size(pts); i++) {
        char pat[96];
        snprintf(pat, sizeof pat, "%spoints[%zu].", at, i);
        if ((s = read_point(r, json_array_get(pts, i), pat, &l->points[i])))
            return s;
        l->n_points = i + 1;
    }
    return RF_OK;
}

rf_status rf__cluster_read(const char *origin, json_t *root, rf_cluster *out, rf_err *err)
{
    rf__json_doc r = {.origin = origin, .err = err};
    json_t *c = json_object_get(root, "cluster"), *nodes = NULL, *links = NULL;
    memset(out, 0, sizeof *out);
    if (!c)
        return RF_OK;
    if (!json_is_object(c))
        return rf__json_fail(r.err, r.origin, "cluster must be an object");
    int64_t ranks = 0;
    rf_status s;
    if ((s = rf__field_whole(&r, c, "cluster.", "ranks", true, 1, 1 << 20, &ranks)) ||
        (s = rf__field_string(&r, c, "cluster.", "mpi", true, out->mpi, sizeof out->mpi)) ||
        (s = rf__field_array(&r, c, "cluster.", "nodes", true, RF_CLUSTER_MAX_NODES, &nodes)) ||
        (s = rf__field_array(&r, c, "cluster.", "links", true, RF_CLUSTER_MAX_LINKS, &links)))
        return s;
    out->ranks = (int)ranks;
    for (size_t i = 0; i < json_array_size(nodes); i++) {
        char at[48];
        snprintf(at, sizeof at, "cluster.nodes[%zu].", i);
        if ((s = read_node(&r, json_array_get(nodes, i), at, &out->nodes[i])))
            return s;
        out->n_nodes = i + 1;
    }
    for (size_t i = 0; i < json_array_size(links); i++) {
        char at[48];
        snprintf(at, sizeof at, "cluster.links[%zu].", i);
        if ((s = read_link(&r, json_array_get(links, i), at, &out->links[i])))
            return s;
        out->n_links = i + 1;
    }
    rf_err e;
    if (rf_cluster_validate(out, &e))
        return rf__json_fail(r.err, r.origin, "%s", e.msg);
    /* the fit's figures within the readers' ranges: a latency of 1e306 s
     * made "inf us a hop" and a null in the JSON (issue 28) */
    for (size_t i = 0; i < out->n_links; i++) {
        char path[64];
        snprintf(path, sizeof path, "cluster.links[%zu].bandwidth_bytes_per_s", i);
        if ((s = rf__figure_check(origin, path, out->links[i].bw_bytes_per_s, RF__FIG_BW, false,
                                  err)))
            return s;
        snprintf(path, sizeof path, "cluster.links[%zu].latency_s", i);
        if ((s = rf__figure_check(origin, path, out->links[i].latency_s, RF__FIG_TIME, true, err)))
            return s;
        if (!(out->links[i].residual >= 0 && out->links[i].residual <= 1e3))
            return rf__json_fail(err, origin,
                                 "cluster.links[%zu].residual (%g) must be within "
                                 "[0, 1000]",
                                 i, out->links[i].residual);
    }
    return RF_OK;
}
