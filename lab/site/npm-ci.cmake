# Installs the page's npm packages from the lockfile (npm ci) into
# lab/site/node_modules, then touches STAMP. A failure is a warning: the lab
# still builds, and its page says it has no charts.
execute_process(COMMAND "${NPM}" ci --no-audit --no-fund --loglevel=error
  WORKING_DIRECTORY "${DIR}" RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(WARNING "npm ci in ${DIR} failed (${rc}): the results page will have no charts and its browser tests will be skipped.\n${err}")
endif()
file(TOUCH "${STAMP}")
