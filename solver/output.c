#define _GNU_SOURCE
#include "output.h"

#include <hdf5.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int fail(char *err, size_t errlen, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err, errlen, fmt, ap);
  va_end(ap);
  return -1;
}

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
  if (!f) return fail(err, errlen, "%s: cannot write", tmp);
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
  if (fclose(f)) return fail(err, errlen, "%s: write failed", tmp);
  if (rename(tmp, xmf)) return fail(err, errlen, "%s: cannot rename to %s", tmp, xmf);
  return 0;
}

int dem_output_write_frame(const char *base, const dem_output_frame_t *fr, int create, char *err, size_t errlen)
{
  char path[1100], tmp[1110];
  snprintf(path, sizeof path, "%s.h5", base);
  snprintf(tmp, sizeof tmp, "%s.tmp", path);
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
  /* work on a copy, then rename: a run killed while writing leaves the previous file whole */
  if (!create && access(path, R_OK) == 0) {
    if (copy_file(path, tmp)) return fail(err, errlen, "%s: cannot copy to %s", path, tmp);
  } else {
    create = 1;
  }
  hid_t file = create ? H5Fcreate(tmp, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT) : H5Fopen(tmp, H5F_ACC_RDWR, H5P_DEFAULT);
  if (file < 0) return fail(err, errlen, "%s: HDF5 cannot create/open it", tmp);
  char gname[32];
  snprintf(gname, sizeof gname, "Step%06ld", fr->step);
  if (H5Lexists(file, gname, H5P_DEFAULT) > 0) H5Ldelete(file, gname, H5P_DEFAULT);
  hid_t g = H5Gcreate2(file, gname, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  int rc = g < 0 ? -1 : 0;
  size_t n = fr->n;
  int32_t *ibuf = malloc((n ? n : 1) * sizeof *ibuf);
  double *dbuf = malloc((n ? n : 1) * 3 * sizeof *dbuf);
  if (!ibuf || !dbuf) rc = -1;
  hsize_t d1[1] = {n}, d2[2] = {n, 3};
  if (rc == 0) {
    for (size_t i = 0; i < n; i++) ibuf[i] = fr->rec[i].id;
    rc |= write_dataset(g, "ParticleIDs", H5T_NATIVE_INT32, 1, d1, ibuf);
    for (size_t i = 0; i < n; i++) ibuf[i] = fr->rec[i].owner;
    rc |= write_dataset(g, "Owner", H5T_NATIVE_INT32, 1, d1, ibuf);
    for (size_t i = 0; i < n; i++) ibuf[i] = fr->rec[i].contacts;
    rc |= write_dataset(g, "Contacts", H5T_NATIVE_INT32, 1, d1, ibuf);
    for (size_t i = 0; i < n; i++) dbuf[i] = fr->rec[i].radius;
    rc |= write_dataset(g, "Radius", H5T_NATIVE_DOUBLE, 1, d1, dbuf);
    static const char *vec[3] = {"Coordinates", "Velocities", "AngularVelocities"};
    for (int v = 0; v < 3; v++) {
      for (size_t i = 0; i < n; i++) {
        const double *src = v == 0 ? fr->rec[i].pos : v == 1 ? fr->rec[i].vel : fr->rec[i].omega;
        memcpy(dbuf + 3 * i, src, 3 * sizeof(double));
      }
      rc |= write_dataset(g, vec[v], H5T_NATIVE_DOUBLE, 2, d2, dbuf);
    }
    rc |= write_attr(g, "Time", H5T_NATIVE_DOUBLE, &fr->time);
    rc |= write_attr(g, "Step", H5T_NATIVE_LONG, &fr->step);
    rc |= write_string_attr(file, "Latest", gname);
  }
  free(ibuf);
  free(dbuf);
  if (g >= 0) H5Gclose(g);
  if (rc == 0) rc = write_xdmf(base, file, err, errlen) ? -2 : 0;
  if (H5Fclose(file) < 0 && rc == 0) rc = -1;
  if (rc == -1) fail(err, errlen, "%s: HDF5 write failed", tmp);
  if (rc) {
    unlink(tmp);
    return -1;
  }
  if (rename(tmp, path)) return fail(err, errlen, "%s: cannot rename to %s", tmp, path);
  return 0;
}
