#define _GNU_SOURCE
#include "base/error.h"
#include "io/output.h"

#include <hdf5.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>


static int write_dataset(hid_t group, const char *name, hid_t type, int rank, const hsize_t *dims, const void *data)
{
  hid_t space = H5Screate_simple(rank, dims, NULL);
  if (space < 0) return -1;
  hid_t dset = H5Dcreate2(group, name, type, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  herr_t rc = dset < 0 ? -1 : H5Dwrite(dset, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data);
  if (dset >= 0) H5Dclose(dset);
  H5Sclose(space);
  return rc < 0 ? -1 : 0;
}

static int write_attr(hid_t obj, const char *name, hid_t type, const void *v)
{
  hid_t space = H5Screate(H5S_SCALAR);
  hid_t a = H5Acreate2(obj, name, type, space, H5P_DEFAULT, H5P_DEFAULT);
  herr_t rc = a < 0 ? -1 : H5Awrite(a, type, v);
  if (a >= 0) H5Aclose(a);
  H5Sclose(space);
  return rc < 0 ? -1 : 0;
}

static int write_string_attr(hid_t obj, const char *name, const char *v)
{
  hid_t type = H5Tcopy(H5T_C_S1);
  H5Tset_size(type, strlen(v) + 1);
  if (H5Aexists(obj, name) > 0) H5Adelete(obj, name);
  int rc = write_attr(obj, name, type, v);
  H5Tclose(type);
  return rc;
}

static int copy_file(const char *from, const char *to)
{
  FILE *a = fopen(from, "rb");
  if (!a) return -1;
  FILE *b = fopen(to, "wb");
  if (!b) {
    fclose(a);
    return -1;
  }
  char buf[1 << 16];
  size_t n;
  int rc = 0;
  while ((n = fread(buf, 1, sizeof buf, a)) > 0)
    if (fwrite(buf, 1, n, b) != n) rc = -1;
  fclose(a);
  if (fclose(b)) rc = -1;
  return rc;
}

/* The XDMF sidecar: one Polyvertex grid per step group found in the file. */
static int write_xdmf(const char *base, hid_t file, char *err, size_t errlen)
{
  char xmf[1100], tmp[1110], h5name[1100];
  snprintf(xmf, sizeof xmf, "%s.xmf", base);
  snprintf(tmp, sizeof tmp, "%s.tmp", xmf);
  const char *slash = strrchr(base, '/');
  snprintf(h5name, sizeof h5name, "%s.h5", slash ? slash + 1 : base);
  FILE *f = fopen(tmp, "w");
  if (!f) return dem_fail(err, errlen, "%s: cannot write", tmp);
  fprintf(f, "<?xml version=\"1.0\" ?>\n<!DOCTYPE Xdmf SYSTEM \"Xdmf.dtd\" []>\n<Xdmf Version=\"2.1\">\n<Domain>\n"
             "<Grid Name=\"particles\" GridType=\"Collection\" CollectionType=\"Temporal\">\n");
  H5G_info_t info;
  H5Gget_info(file, &info);
  for (hsize_t g = 0; g < info.nlinks; g++) {
    char name[64];
    if (H5Lget_name_by_idx(file, ".", H5_INDEX_NAME, H5_ITER_INC, g, name, sizeof name, H5P_DEFAULT) < 0) continue;
    if (strncmp(name, "Step", 4) != 0) continue;
    hid_t grp = H5Gopen2(file, name, H5P_DEFAULT);
    double time = 0;
    hid_t a = H5Aopen(grp, "Time", H5P_DEFAULT);
    H5Aread(a, H5T_NATIVE_DOUBLE, &time);
    H5Aclose(a);
    hid_t d = H5Dopen2(grp, "ParticleIDs", H5P_DEFAULT);
    hid_t sp = H5Dget_space(d);
    hsize_t n = 0;
    H5Sget_simple_extent_dims(sp, &n, NULL);
    H5Sclose(sp);
    H5Dclose(d);
    H5Gclose(grp);
    unsigned long long N = (unsigned long long)n;
    fprintf(f, " <Grid Name=\"%s\" GridType=\"Uniform\">\n  <Time Value=\"%.12g\"/>\n"
               "  <Topology TopologyType=\"Polyvertex\" NumberOfElements=\"%llu\" NodesPerElement=\"1\"/>\n"
               "  <Geometry GeometryType=\"XYZ\">\n"
               "   <DataItem Dimensions=\"%llu 3\" NumberType=\"Float\" Precision=\"8\" Format=\"HDF\">%s:/%s/Coordinates</DataItem>\n"
               "  </Geometry>\n", name, time, N, N, h5name, name);
    static const struct { const char *ds, *type, *num; int prec; } attrs[] = {
      {"ParticleIDs", "Scalar", "Int", 4}, {"Velocities", "Vector", "Float", 8},
      {"AngularVelocities", "Vector", "Float", 8}, {"Radius", "Scalar", "Float", 8},
      {"Owner", "Scalar", "Int", 4}, {"Contacts", "Scalar", "Int", 4}};
    for (size_t k = 0; k < sizeof attrs / sizeof attrs[0]; k++) {
      int vec = attrs[k].type[0] == 'V';
      fprintf(f, "  <Attribute Name=\"%s\" AttributeType=\"%s\" Center=\"Node\">\n"
                 "   <DataItem Dimensions=\"%llu%s\" NumberType=\"%s\" Precision=\"%d\" Format=\"HDF\">%s:/%s/%s</DataItem>\n"
                 "  </Attribute>\n", attrs[k].ds, attrs[k].type, N, vec ? " 3" : "", attrs[k].num, attrs[k].prec,
              h5name, name, attrs[k].ds);
    }
    fprintf(f, " </Grid>\n");
  }
  fprintf(f, "</Grid>\n</Domain>\n</Xdmf>\n");
  if (fclose(f)) return dem_fail(err, errlen, "%s: write failed", tmp);
  if (rename(tmp, xmf)) return dem_fail(err, errlen, "%s: cannot rename to %s", tmp, xmf);
  return 0;
}

/* the datasets of a frame, in the order of the columns of dem_output_frame_t */
static const struct { const char *name; int vec; int is_int; const char *units; } frame_sets[] = {
  {"ParticleIDs", 0, 1, "1"}, {"Owner", 0, 1, "1"}, {"Contacts", 0, 1, "1"}, {"Radius", 0, 0, "m"},
  {"Coordinates", 1, 0, "m"}, {"Velocities", 1, 0, "m/s"}, {"AngularVelocities", 1, 0, "rad/s"},
};
#define N_FRAME_SETS (sizeof frame_sets / sizeof frame_sets[0])

struct dem_output_frame_writer {
  char base[1024], path[1100], tmp[1110];
  hid_t file, group;
  hid_t sets[N_FRAME_SETS];
  size_t n;
};

static void frame_writer_free(dem_output_frame_writer_t *w, int remove_tmp)
{
  for (size_t k = 0; k < N_FRAME_SETS; k++)
    if (w->sets[k] >= 0) H5Dclose(w->sets[k]);
  if (w->group >= 0) H5Gclose(w->group);
  if (w->file >= 0) H5Fclose(w->file);
  if (remove_tmp) unlink(w->tmp);
  free(w);
}

dem_output_frame_writer_t *dem_output_frame_open(const char *base, long step, double time, size_t n, int create,
                                                 char *err, size_t errlen)
{
  dem_output_frame_writer_t *w = calloc(1, sizeof *w);
  if (!w) {
    dem_fail(err, errlen, "out of memory");
    return NULL;
  }
  w->file = w->group = -1;
  for (size_t k = 0; k < N_FRAME_SETS; k++) w->sets[k] = -1;
  w->n = n;
  snprintf(w->base, sizeof w->base, "%s", base);
  snprintf(w->path, sizeof w->path, "%s.h5", base);
  snprintf(w->tmp, sizeof w->tmp, "%s.tmp", w->path);
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
  /* work on a copy, then rename: a run killed while writing leaves the previous file whole */
  if (!create && access(w->path, R_OK) == 0) {
    if (copy_file(w->path, w->tmp)) {
      dem_fail(err, errlen, "%s: cannot copy to %s", w->path, w->tmp);
      frame_writer_free(w, 1);
      return NULL;
    }
  } else {
    create = 1;
  }
  w->file = create ? H5Fcreate(w->tmp, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT) : H5Fopen(w->tmp, H5F_ACC_RDWR, H5P_DEFAULT);
  if (w->file < 0) {
    dem_fail(err, errlen, "%s: HDF5 cannot create/open it", w->tmp);
    frame_writer_free(w, 1);
    return NULL;
  }
  char gname[32];
  snprintf(gname, sizeof gname, "Step%06ld", step);
  if (H5Lexists(w->file, gname, H5P_DEFAULT) > 0) H5Ldelete(w->file, gname, H5P_DEFAULT);
  w->group = H5Gcreate2(w->file, gname, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  int rc = w->group < 0 ? -1 : 0;
  for (size_t k = 0; k < N_FRAME_SETS && rc == 0; k++) {
    hsize_t dims[2] = {n, 3};
    hid_t space = H5Screate_simple(frame_sets[k].vec ? 2 : 1, dims, NULL);
    w->sets[k] = space < 0 ? -1 : H5Dcreate2(w->group, frame_sets[k].name, frame_sets[k].is_int ? H5T_NATIVE_INT32 : H5T_NATIVE_DOUBLE,
                                              space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    if (space >= 0) H5Sclose(space);
    if (w->sets[k] < 0 || write_string_attr(w->sets[k], "units", frame_sets[k].units)) rc = -1;
  }
  if (rc == 0) {
    rc |= write_attr(w->group, "Time", H5T_NATIVE_DOUBLE, &time);
    rc |= write_string_attr(w->group, "Time_units", "s");
    rc |= write_attr(w->group, "Step", H5T_NATIVE_LONG, &step);
    rc |= write_string_attr(w->file, "Latest", gname);
  }
  if (rc) {
    dem_fail(err, errlen, "%s: HDF5 write failed", w->tmp);
    frame_writer_free(w, 1);
    return NULL;
  }
  return w;
}

int dem_output_frame_meta(dem_output_frame_writer_t *w, const dem_output_meta_t *m, char *err, size_t errlen)
{
  const char *attrs[][2] = {{"scenario", m->scenario}, {"scenario_file", m->file}, {"configuration", m->config},
                            {"demsim_version", m->version}, {"build", m->build}};
  int rc = 0;
  for (size_t i = 0; i < sizeof attrs / sizeof attrs[0]; i++)
    rc |= write_string_attr(w->file, attrs[i][0], attrs[i][1] ? attrs[i][1] : "");
  return rc ? dem_fail(err, errlen, "%s: HDF5 cannot write its attributes", w->tmp) : 0;
}

int dem_output_frame_rows(dem_output_frame_writer_t *w, size_t first, const dem_output_frame_t *rows, char *err,
                          size_t errlen)
{
  if (rows->n == 0) return 0;
  if (first + rows->n > w->n)
    return dem_fail(err, errlen, "%s: rows [%zu, %zu) beyond the frame's %zu particles", w->tmp, first,
                    first + rows->n, w->n);
  const void *cols[N_FRAME_SETS] = {rows->id, rows->owner, rows->contacts, rows->radius,
                                    rows->pos, rows->vel, rows->omega};
  int rc = 0;
  for (size_t k = 0; k < N_FRAME_SETS && rc == 0; k++) {
    hsize_t start[2] = {first, 0}, count[2] = {rows->n, 3};
    int rank = frame_sets[k].vec ? 2 : 1;
    hid_t fs = H5Dget_space(w->sets[k]);
    hid_t ms = H5Screate_simple(rank, count, NULL);
    if (fs < 0 || ms < 0 || H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, count, NULL) < 0 ||
        H5Dwrite(w->sets[k], frame_sets[k].is_int ? H5T_NATIVE_INT32 : H5T_NATIVE_DOUBLE, ms, fs, H5P_DEFAULT,
                 cols[k]) < 0)
      rc = dem_fail(err, errlen, "%s: HDF5 write of /%s rows [%zu, %zu) failed", w->tmp, frame_sets[k].name,
                    first, first + rows->n);
    if (ms >= 0) H5Sclose(ms);
    if (fs >= 0) H5Sclose(fs);
  }
  return rc;
}

int dem_output_frame_close(dem_output_frame_writer_t **wp, int ok, char *err, size_t errlen)
{
  dem_output_frame_writer_t *w = *wp;
  *wp = NULL;
  if (!w) return -1;
  for (size_t k = 0; k < N_FRAME_SETS; k++) {
    if (w->sets[k] >= 0 && H5Dclose(w->sets[k]) < 0) ok = 0;
    w->sets[k] = -1;
  }
  if (w->group >= 0 && H5Gclose(w->group) < 0) ok = 0;
  w->group = -1;
  if (!ok) {
    frame_writer_free(w, 1);
    return -1;
  }
  int rc = write_xdmf(w->base, w->file, err, errlen) ? -2 : 0;
  if (H5Fclose(w->file) < 0 && rc == 0) rc = -1;
  w->file = -1;
  if (rc == -1) dem_fail(err, errlen, "%s: HDF5 write failed", w->tmp);
  if (rc) {
    frame_writer_free(w, 1);
    return -1;
  }
  if (rename(w->tmp, w->path)) {
    dem_fail(err, errlen, "%s: cannot rename to %s", w->tmp, w->path);
    frame_writer_free(w, 1);
    return -1;
  }
  frame_writer_free(w, 0);
  return 0;
}

int dem_output_write_frame(const char *base, const dem_output_frame_t *fr, int create, char *err, size_t errlen)
{
  dem_output_frame_writer_t *w = dem_output_frame_open(base, fr->step, fr->time, fr->n, create, err, errlen);
  if (!w) return -1;
  int ok = dem_output_frame_rows(w, 0, fr, err, errlen) == 0;
  return dem_output_frame_close(&w, ok, err, errlen);
}

/* ---- checkpoints ---------------------------------------------------------------------- */
#include "dem/particles.h"

typedef struct ckpt_field {
  const char *name;
  int is_int;
  size_t width;   /* values per particle in the file */
  size_t offset;  /* of the array pointer in dem_particles_t */
  size_t per_slot; /* > 0: width / DEM_MAX_NEIGHBORS values per slot; the store holds p->slots slots */
} ckpt_field_t;

static const ckpt_field_t ckpt_fields[] = {
  {"ParticleIDs", 1, 1, offsetof(dem_particles_t, id), 0},
  {"Coordinates", 0, 3, offsetof(dem_particles_t, pos), 0},
  {"Velocities", 0, 3, offsetof(dem_particles_t, vel), 0},
  {"AngularVelocities", 0, 3, offsetof(dem_particles_t, omega), 0},
  {"Forces", 0, 3, offsetof(dem_particles_t, force), 0},
  {"Torques", 0, 3, offsetof(dem_particles_t, torque), 0},
  {"Radius", 0, 1, offsetof(dem_particles_t, radius), 0},
  {"SlotCount", 1, 1, offsetof(dem_particles_t, nbr_count), 0},
  {"SlotPartner", 1, DEM_MAX_NEIGHBORS, offsetof(dem_particles_t, nbr_gid), 1},
  {"Springs", 0, 3 * DEM_MAX_NEIGHBORS, offsetof(dem_particles_t, spring), 3},
};
#define N_CKPT_FIELDS (sizeof ckpt_fields / sizeof ckpt_fields[0])

static void *field_ptr(const dem_particles_t *p, const ckpt_field_t *f)
{
  return *(void *const *)((const char *)p + f->offset);
}

int dem_output_checkpoint_create(const char *path, const dem_checkpoint_header_t *h, const double *weights,
                                 char *err, size_t errlen)
{
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
  hid_t file = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  if (file < 0) return dem_fail(err, errlen, "%s: HDF5 cannot create it", path);
  int rc = 0;
  rc |= write_attr(file, "Step", H5T_NATIVE_LONG, &h->step);
  rc |= write_attr(file, "Particles", H5T_NATIVE_LONG, &h->total);
  rc |= write_attr(file, "Ranks", H5T_NATIVE_INT, &h->ranks);
  rc |= write_attr(file, "Repartitions", H5T_NATIVE_INT, &h->repartitions);
  rc |= write_attr(file, "Searches", H5T_NATIVE_LONG, &h->searches);
  rc |= write_attr(file, "Kick", H5T_NATIVE_DOUBLE, &h->kick);
  rc |= write_attr(file, "LambdaMax", H5T_NATIVE_DOUBLE, &h->lambda_max);
  rc |= write_attr(file, "LambdaLast", H5T_NATIVE_DOUBLE, &h->lambda_last);
  rc |= write_attr(file, "SimTime", H5T_NATIVE_DOUBLE, &h->sim_time);
  int max_nbr = DEM_MAX_NEIGHBORS;
  rc |= write_attr(file, "MaxNeighbors", H5T_NATIVE_INT, &max_nbr);
  hid_t problem = H5Gcreate2(file, "Problem", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  for (int k = 0; k < h->n_keys && problem >= 0; k++) rc |= write_attr(problem, h->key[k], H5T_NATIVE_DOUBLE, &h->value[k]);
  if (problem >= 0) H5Gclose(problem);
  hsize_t nw = (hsize_t)h->ranks;
  rc |= write_dataset(file, "Weights", H5T_NATIVE_DOUBLE, 1, &nw, weights);
  hid_t grp = H5Gcreate2(file, "Particles", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  for (size_t f = 0; f < N_CKPT_FIELDS && grp >= 0; f++) {
    hsize_t dims[2] = {(hsize_t)h->total, ckpt_fields[f].width};
    hid_t space = H5Screate_simple(2, dims, NULL);
    hid_t d = H5Dcreate2(grp, ckpt_fields[f].name, ckpt_fields[f].is_int ? H5T_NATIVE_INT32 : H5T_NATIVE_DOUBLE, space,
                         H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    if (d < 0) rc = -1;
    else H5Dclose(d);
    H5Sclose(space);
  }
  if (grp < 0) rc = -1;
  else H5Gclose(grp);
  if (H5Fclose(file) < 0) rc = -1;
  return rc ? dem_fail(err, errlen, "%s: HDF5 write failed", path) : 0;
}

/* Reads or writes rows [offset, offset + n) of every particle field, from or into the store's
 * rows [first_local, first_local + n). The file has DEM_MAX_NEIGHBORS slots per particle, the
 * store p->slots: the first p->slots columns are written (the rest keep HDF5's fill value, 0);
 * before reading slots the store is widened to the largest SlotCount read. */
static int ckpt_rows(const char *path, int writing, long offset, long n, dem_particles_t *p, size_t first_local,
                     char *err, size_t errlen)
{
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
  hid_t file = H5Fopen(path, writing ? H5F_ACC_RDWR : H5F_ACC_RDONLY, H5P_DEFAULT);
  if (file < 0) return dem_fail(err, errlen, "%s: HDF5 cannot open it", path);
  int rc = 0;
  for (size_t f = 0; f < N_CKPT_FIELDS && rc == 0 && n > 0; f++) {
    const ckpt_field_t *cf = &ckpt_fields[f];
    char name[64];
    snprintf(name, sizeof name, "Particles/%s", cf->name);
    hid_t d = H5Dopen2(file, name, H5P_DEFAULT);
    if (d < 0) {
      rc = dem_fail(err, errlen, "%s: dataset /%s is missing (not a demsim checkpoint?)", path, name);
      break;
    }
    if (cf->per_slot && !writing) {
      int widest = p->slots;
      for (size_t i = first_local; i < first_local + (size_t)n; i++)
        if (p->nbr_count[i] > widest) widest = p->nbr_count[i];
      if (widest > DEM_MAX_NEIGHBORS || dem_particles_widen_slots(p, widest)) {
        H5Dclose(d);
        rc = dem_fail(err, errlen, "%s: a particle uses %d contact slots (this build has %d), or out of memory",
                      path, widest, DEM_MAX_NEIGHBORS);
        break;
      }
    }
    size_t mem_width = cf->per_slot ? cf->per_slot * (size_t)p->slots : cf->width;
    hid_t fs = H5Dget_space(d);
    hsize_t start[2] = {(hsize_t)offset, 0}, count[2] = {(hsize_t)n, mem_width}, dims[2] = {0, 0};
    H5Sget_simple_extent_dims(fs, dims, NULL);
    if (dims[1] != cf->width || (hsize_t)(offset + n) > dims[0]) {
      rc = dem_fail(err, errlen, "%s: dataset /%s has shape %llu x %llu, expected rows up to %ld x %zu", path, name,
                (unsigned long long)dims[0], (unsigned long long)dims[1], offset + n, cf->width);
    } else {
      H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, count, NULL);
      hid_t ms = H5Screate_simple(2, count, NULL);
      hid_t type = cf->is_int ? H5T_NATIVE_INT32 : H5T_NATIVE_DOUBLE;
      size_t elem = cf->is_int ? sizeof(int32_t) : sizeof(double);
      char *base = (char *)field_ptr(p, cf) + first_local * mem_width * elem;
      herr_t e = writing ? H5Dwrite(d, type, ms, fs, H5P_DEFAULT, base) : H5Dread(d, type, ms, fs, H5P_DEFAULT, base);
      if (e < 0) rc = dem_fail(err, errlen, "%s: HDF5 %s of /%s failed", path, writing ? "write" : "read", name);
      H5Sclose(ms);
    }
    H5Sclose(fs);
    H5Dclose(d);
  }
  if (H5Fclose(file) < 0 && rc == 0) rc = dem_fail(err, errlen, "%s: HDF5 close failed", path);
  return rc;
}

int dem_output_checkpoint_write(const char *path, long offset, const dem_particles_t *p, char *err, size_t errlen)
{
  /* writing leaves the store as it is */
  return ckpt_rows(path, 1, offset, (long)p->n, (dem_particles_t *)p, 0, err, errlen);
}

static int read_attr(hid_t obj, const char *name, hid_t type, void *v)
{
  hid_t a = H5Aopen(obj, name, H5P_DEFAULT);
  if (a < 0) return -1;
  herr_t rc = H5Aread(a, type, v);
  H5Aclose(a);
  return rc < 0 ? -1 : 0;
}

static herr_t collect_key(hid_t loc, const char *name, const H5A_info_t *info, void *data)
{
  (void)info;
  dem_checkpoint_header_t *h = data;
  if (h->n_keys >= DEM_CHECKPOINT_MAX_KEYS) return 0;
  snprintf(h->key[h->n_keys], sizeof h->key[0], "%s", name);
  if (read_attr(loc, name, H5T_NATIVE_DOUBLE, &h->value[h->n_keys]) == 0) h->n_keys++;
  return 0;
}

int dem_output_checkpoint_read_header(const char *path, dem_checkpoint_header_t *h, double *weights, int max_weights,
                                      int *n_weights, char *err, size_t errlen)
{
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
  memset(h, 0, sizeof *h);
  if (access(path, R_OK)) return dem_fail(err, errlen, "%s: cannot read the restart file", path);
  if (H5Fis_hdf5(path) <= 0) return dem_fail(err, errlen, "%s: not an HDF5 file (expected a demsim checkpoint)", path);
  hid_t file = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
  if (file < 0) return dem_fail(err, errlen, "%s: HDF5 cannot open it", path);
  int rc = 0, max_nbr = 0;
  rc |= read_attr(file, "Step", H5T_NATIVE_LONG, &h->step);
  rc |= read_attr(file, "Particles", H5T_NATIVE_LONG, &h->total);
  rc |= read_attr(file, "Ranks", H5T_NATIVE_INT, &h->ranks);
  rc |= read_attr(file, "Repartitions", H5T_NATIVE_INT, &h->repartitions);
  rc |= read_attr(file, "Searches", H5T_NATIVE_LONG, &h->searches);
  rc |= read_attr(file, "Kick", H5T_NATIVE_DOUBLE, &h->kick);
  rc |= read_attr(file, "LambdaMax", H5T_NATIVE_DOUBLE, &h->lambda_max);
  rc |= read_attr(file, "LambdaLast", H5T_NATIVE_DOUBLE, &h->lambda_last);
  rc |= read_attr(file, "SimTime", H5T_NATIVE_DOUBLE, &h->sim_time);
  rc |= read_attr(file, "MaxNeighbors", H5T_NATIVE_INT, &max_nbr);
  if (rc) {
    H5Fclose(file);
    return dem_fail(err, errlen, "%s: not a demsim checkpoint (attributes Step, Particles, Ranks, ... missing)", path);
  }
  if (max_nbr != DEM_MAX_NEIGHBORS) {
    H5Fclose(file);
    return dem_fail(err, errlen, "%s: written with %d contact slots per particle, this build has %d", path, max_nbr,
                DEM_MAX_NEIGHBORS);
  }
  hid_t problem = H5Gopen2(file, "Problem", H5P_DEFAULT);
  if (problem >= 0) {
    hsize_t idx = 0;
    H5Aiterate2(problem, H5_INDEX_NAME, H5_ITER_INC, &idx, collect_key, h);
    H5Gclose(problem);
  }
  hid_t d = H5Dopen2(file, "Weights", H5P_DEFAULT);
  if (d >= 0) {
    hid_t sp = H5Dget_space(d);
    hsize_t n = 0;
    H5Sget_simple_extent_dims(sp, &n, NULL);
    H5Sclose(sp);
    *n_weights = (int)n;
    if ((int)n <= max_weights) H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, weights);
    H5Dclose(d);
  } else {
    *n_weights = 0;
  }
  H5Fclose(file);
  return 0;
}

int dem_output_checkpoint_read(const char *path, long first, long count, dem_particles_t *p, char *err, size_t errlen)
{
  size_t base = p->n;
  if (dem_particles_reserve(p, base + (size_t)count + p->n_ghost))
    return dem_fail(err, errlen, "out of memory reading %ld particles", count);
  if (ckpt_rows(path, 0, first, count, p, base, err, errlen)) return -1;
  /* slot partners are global ids; local indices are rebuilt by the next contact search */
  for (size_t i = base; i < base + (size_t)count; i++)
    for (int k = 0; k < p->slots; k++) p->nbr_index[i * (size_t)p->slots + (size_t)k] = -1 - DEM_WALL_COUNT;
  p->n = base + (size_t)count;
  return 0;
}
