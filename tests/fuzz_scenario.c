/* libFuzzer target for the scenario reader: any byte string, parsed as a scenario file and
 * then validated, must give 0 or -1 with a message -- never a crash, a hang, a leak or
 * undefined behaviour (built with ASan + UBSan). Seeds: the files in scenarios/. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "scenario/scenario.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  char *text = malloc(size + 1);
  if (!text) return 0;
  memcpy(text, data, size);
  text[size] = '\0';
  static dem_scenario_t s;
  char err[2048];
  dem_scenario_defaults(&s);
  int rc = dem_scenario_read_text(&s, text, "fuzz.cfg", err, sizeof err);
  if (rc == 0) rc = dem_scenario_validate(&s, err, sizeof err);
  if (rc != 0 && err[0] == '\0') abort(); /* every failure must explain itself */
  free(text);
  return 0;
}
